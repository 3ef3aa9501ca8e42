"""Spec → engine objects. Every name is resolved and every value checked here, so a
spec that builds is a spec the solve loop can run.
"""

from __future__ import annotations

import re

import mujoco
import numpy as np

from posekit.ik.exceptions import InvalidConstraint, LimitDefinitionError, TaskDefinitionError
from posekit.ik.frames import resolve_frame_id
from posekit.ik.limits import (
    CollisionAvoidanceLimit,
    ConfigurationLimit,
    FreeJointVelocityLimit,
    Limit,
    VelocityLimit,
)
from posekit.ik.tasks import (
    AxisAlignTask,
    BaseTask,
    ComTask,
    DampingTask,
    DofFreezingTask,
    EqualityConstraintTask,
    FrameTask,
    KineticEnergyRegularizationTask,
    LookAtTask,
    PostureTask,
    RelativeFrameTask,
)
from posekit.robots.naming import JOINT_DOFS, equality_names, joint_type, named
from posekit.sessions.errors import known_names
from posekit.sessions.limit_specs import LimitSpec
from posekit.sessions.task_specs import TaskSpec

_UNNAMED = re.compile(r"^#(\d+)$")


def joint_id(model: mujoco.MjModel, name: str, error: type[Exception] = TaskDefinitionError) -> int:
    """The id of a named joint; the error lists the valid names."""
    jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
    if jid < 0:
        valid = named(model, mujoco.mjtObj.mjOBJ_JOINT, model.njnt)
        raise error(f"joint {name!r} does not exist; valid joints are {known_names(valid)}")
    return jid


def joint_dofs(model: mujoco.MjModel, name: str) -> list[int]:
    """Indices in the velocity vector of a named joint's degrees of freedom."""
    jid = joint_id(model, name)
    start = int(model.jnt_dofadr[jid])
    return list(range(start, start + JOINT_DOFS[joint_type(model, jid)]))


def per_dof_cost(model: mujoco.MjModel, cost: float | dict[str, float]) -> float | np.ndarray:
    """A scalar cost as is, or ``{joint: cost}`` as a vector of size nv (others 0)."""
    if not isinstance(cost, dict):
        return cost
    vector = np.zeros(model.nv)
    for name, value in cost.items():
        vector[joint_dofs(model, name)] = value
    return vector


def equality_refs(model: mujoco.MjModel, names: list[str] | None) -> list[int | str] | None:
    """Equality names with ``"#<id>"`` turned into ids (validated by the engine)."""
    if names is None:
        return None
    refs: list[int | str] = []
    for name in names:
        match = _UNNAMED.match(name)
        if match and mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_EQUALITY, name) < 0:
            eq_id = int(match.group(1))
            if eq_id >= model.neq:
                raise InvalidConstraint(
                    f"equality {name!r} does not exist; the model's equalities are "
                    f"{known_names(equality_names(model))}"
                )
            refs.append(eq_id)
        else:
            refs.append(name)
    return refs


def build_task(spec: TaskSpec, model: mujoco.MjModel, dt: float) -> BaseTask:
    """The engine task of a spec (without its target)."""
    p = spec.params
    if spec.type == "frame":
        resolve_frame_id(model, p.frame, p.frame_type)
        return FrameTask(
            p.frame, p.frame_type, p.position_cost, p.orientation_cost, p.gain, p.lm_damping
        )
    if spec.type == "relative_frame":
        resolve_frame_id(model, p.frame, p.frame_type)
        resolve_frame_id(model, p.root, p.root_type)
        return RelativeFrameTask(
            p.frame,
            p.frame_type,
            p.root,
            p.root_type,
            p.position_cost,
            p.orientation_cost,
            p.gain,
            p.lm_damping,
        )
    if spec.type == "com":
        return ComTask(p.cost, p.gain, p.lm_damping)
    if spec.type in ("look_at", "axis_align"):
        resolve_frame_id(model, p.frame, p.frame_type)
        cls = LookAtTask if spec.type == "look_at" else AxisAlignTask
        return cls(p.frame, p.frame_type, p.axis, p.cost, p.gain, p.lm_damping)
    if spec.type == "equality":
        return EqualityConstraintTask(
            model, p.cost, equality_refs(model, p.equalities), p.gain, p.lm_damping
        )
    if spec.type == "dof_freezing":
        dofs = [d for name in p.joints for d in joint_dofs(model, name)]
        return DofFreezingTask(model, dofs, p.gain)
    if spec.type == "posture":
        return PostureTask(model, per_dof_cost(model, p.cost), p.gain, p.lm_damping)
    if spec.type == "damping":
        return DampingTask(model, per_dof_cost(model, p.cost))
    task = KineticEnergyRegularizationTask(p.cost)
    task.set_dt(dt)
    return task


def build_limit(spec: LimitSpec, model: mujoco.MjModel) -> Limit:
    """The engine limit of a spec."""
    p = spec.params
    if spec.type == "configuration":
        return ConfigurationLimit(model, p.gain, p.min_distance_from_limits)
    if spec.type == "velocity":
        for name in p.velocities:
            joint_id(model, name, LimitDefinitionError)
        return VelocityLimit(model, dict(p.velocities))
    if spec.type == "free_joint_velocity":
        if p.joint is not None:
            joint_id(model, p.joint, LimitDefinitionError)
        return FreeJointVelocityLimit(
            model, p.max_linear_velocity, p.max_angular_velocity, joint_name=p.joint
        )
    pairs = [(list(a), list(b)) for a, b in p.geom_pairs]
    return CollisionAvoidanceLimit(
        model,
        pairs,
        p.gain,
        p.minimum_distance_from_collisions,
        p.collision_detection_distance,
        p.bound_relaxation,
    )
