"""Random IK problems for comparing the compiled path with the Python reference.

A stack draws every task kind the model allows (frame, relative frame, CoM, look-at,
axis-align, equality, DoF freezing, posture, damping, kinetic energy) with random
frames, costs (scalars, vectors, zeros), gains, Levenberg-Marquardt dampings and
targets near the current configuration; some tasks become hard constraints; limits
are drawn from every limit kind (configuration, velocity, free-joint velocity,
collision avoidance) with random parameters.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mujoco
import numpy as np
import posekit
from posekit.ik.compiled.engine import plan_for
from posekit.ik.compiled.plan import Plan
from posekit.ik.limits.geom_pairs import can_collide
from support.models import random_configuration


@dataclass
class Stack:
    tasks: list[posekit.BaseTask] = field(default_factory=list)
    constraints: list[posekit.Task] = field(default_factory=list)
    limits: list[posekit.Limit] = field(default_factory=list)
    dt: float = 0.01
    damping: float = 1e-12

    def plan(self, configuration: posekit.Configuration) -> Plan:
        """The compiled plan :meth:`solve` uses at ``configuration``."""
        return plan_for(
            configuration, self.tasks, self.dt, self.damping, self.limits,
            self.constraints or None,
        )  # fmt: skip

    def solve(self, configuration: posekit.Configuration) -> np.ndarray:
        return posekit.solve_ik(
            configuration,
            self.tasks,
            self.dt,
            "daqp",
            damping=self.damping,
            limits=self.limits,
            constraints=self.constraints or None,
        )


def _cost(rng: np.random.Generator, size: int) -> float | np.ndarray:
    if rng.random() < 0.4:
        return float(rng.choice([0.0, 0.1, 1.0, 5.0]))
    cost = rng.uniform(0.0, 3.0, size)
    cost[rng.random(size) < 0.2] = 0.0
    return cost


def _frame(model: mujoco.MjModel, rng: np.random.Generator) -> tuple[str, int]:
    kinds = [("body", model.nbody - 1), ("site", model.nsite), ("geom", model.ngeom)]
    kind, count = kinds[int(rng.integers(len(kinds)))]
    if count <= 0:
        kind, count = "body", model.nbody - 1
    frame_id = int(rng.integers(count)) + (1 if kind == "body" else 0)
    return kind, frame_id


def _task_options(rng: np.random.Generator) -> dict[str, float]:
    return {
        "gain": float(rng.choice([1.0, rng.uniform(0.1, 1.0)])),
        "lm_damping": float(rng.choice([0.0, 1e-6, 1e-3])),
    }


def frame_task(configuration: posekit.Configuration, rng: np.random.Generator) -> posekit.Task:
    kind, frame_id = _frame(configuration.model, rng)
    task = posekit.FrameTask(frame_id, kind, _cost(rng, 3), _cost(rng, 3), **_task_options(rng))
    pose = configuration.get_transform_frame_to_world(frame_id, kind)
    task.set_target(pose @ posekit.SE3.exp(rng.normal(scale=0.05, size=6)))
    return task


def relative_frame_task(
    configuration: posekit.Configuration, rng: np.random.Generator
) -> posekit.Task:
    frame_kind, frame_id = _frame(configuration.model, rng)
    root_kind, root_id = _frame(configuration.model, rng)
    task = posekit.RelativeFrameTask(
        frame_id, frame_kind, root_id, root_kind, _cost(rng, 3), _cost(rng, 3), **_task_options(rng)
    )
    relative = configuration.get_transform(frame_id, frame_kind, root_id, root_kind)
    task.set_target(relative @ posekit.SE3.exp(rng.normal(scale=0.05, size=6)))
    return task


def com_task(configuration: posekit.Configuration, rng: np.random.Generator) -> posekit.Task:
    task = posekit.ComTask(_cost(rng, 3), **_task_options(rng))
    task.set_target(configuration.data.subtree_com[1] + rng.normal(scale=0.02, size=3))
    return task


def look_at_task(configuration: posekit.Configuration, rng: np.random.Generator) -> posekit.Task:
    kind, frame_id = _frame(configuration.model, rng)
    task = posekit.LookAtTask(
        frame_id, kind, axis=rng.normal(size=3), cost=_cost(rng, 1), **_task_options(rng)
    )
    pose = configuration.get_transform_frame_to_world(frame_id, kind)
    task.set_target(pose.translation() + rng.normal(scale=0.5, size=3))
    return task


def axis_align_task(configuration: posekit.Configuration, rng: np.random.Generator) -> posekit.Task:
    kind, frame_id = _frame(configuration.model, rng)
    task = posekit.AxisAlignTask(
        frame_id, kind, axis=rng.normal(size=3), cost=_cost(rng, 1), **_task_options(rng)
    )
    task.set_target(rng.normal(size=3))
    return task


def posture_task(configuration: posekit.Configuration, rng: np.random.Generator) -> posekit.Task:
    model = configuration.model
    task = posekit.PostureTask(model, _cost(rng, model.nv), **_task_options(rng))
    task.set_target(random_configuration(model, rng))
    return task


def damping_task(configuration: posekit.Configuration, rng: np.random.Generator) -> posekit.Task:
    return posekit.DampingTask(configuration.model, _cost(rng, configuration.model.nv))


def dof_freezing_task(
    configuration: posekit.Configuration, rng: np.random.Generator
) -> posekit.Task:
    nv = configuration.model.nv
    count = int(rng.integers(1, min(3, nv) + 1))
    dofs = rng.choice(nv, size=count, replace=False).tolist()
    return posekit.DofFreezingTask(configuration.model, dofs, gain=float(rng.uniform(0.1, 1.0)))


def equality_task(configuration: posekit.Configuration, rng: np.random.Generator) -> posekit.Task:
    model = configuration.model
    count = int(rng.integers(1, model.neq + 1))
    chosen = rng.choice(model.neq, size=count, replace=False).tolist()
    return posekit.EqualityConstraintTask(model, _cost(rng, count), chosen, **_task_options(rng))


def kinetic_energy_task(
    configuration: posekit.Configuration, rng: np.random.Generator
) -> posekit.BaseTask:
    task = posekit.KineticEnergyRegularizationTask(float(rng.uniform(0.0, 1e-2)))
    task.set_dt(0.01)
    return task


MAKERS = {
    "frame": frame_task,
    "relative_frame": relative_frame_task,
    "com": com_task,
    "look_at": look_at_task,
    "axis_align": axis_align_task,
    "posture": posture_task,
    "damping": damping_task,
    "dof_freezing": dof_freezing_task,
    "equality": equality_task,
    "kinetic_energy": kinetic_energy_task,
}
CONSTRAINT_KINDS = ("frame", "relative_frame", "com", "posture", "dof_freezing", "equality")


def limits(configuration: posekit.Configuration, rng: np.random.Generator) -> list[posekit.Limit]:
    model = configuration.model
    chosen: list[posekit.Limit] = []
    if rng.random() < 0.8:
        chosen.append(
            posekit.ConfigurationLimit(
                model, float(rng.uniform(0.5, 1.0)), float(rng.choice([0.0, 0.01]))
            )
        )
    if rng.random() < 0.6:
        chosen.append(posekit.VelocityLimit(model, _speeds(model, rng)))
    free = [j for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
    if free and rng.random() < 0.6:
        linear, angular = rng.uniform(0.1, 2.0, 3), float(rng.uniform(0.1, 2.0))
        which = int(rng.integers(3))  # linear only, angular only, or both
        chosen.append(
            posekit.FreeJointVelocityLimit(
                model,
                linear if which != 1 else None,
                angular if which != 0 else None,
                joint_name=model.joint(free[0]).name,
            )
        )
    if rng.random() < 0.6:
        pairs = _collidable_pairs(model, rng)
        if pairs:
            chosen.append(
                posekit.CollisionAvoidanceLimit(
                    model,
                    pairs,
                    gain=float(rng.uniform(0.3, 1.0)),
                    minimum_distance_from_collisions=float(rng.uniform(-0.01, 0.02)),
                    collision_detection_distance=float(rng.uniform(0.05, 0.5)),
                    bound_relaxation=float(rng.choice([0.0, 0.01])),
                    broadphase=bool(rng.random() < 0.7),
                )
            )
    rng.shuffle(chosen)  # type: ignore[arg-type]
    return chosen


def _speeds(model: mujoco.MjModel, rng: np.random.Generator) -> dict[str, object]:
    speeds: dict[str, object] = {}
    for j in range(model.njnt):
        kind = model.jnt_type[j]
        name = model.joint(j).name
        if not name or kind == mujoco.mjtJoint.mjJNT_FREE or rng.random() < 0.4:
            continue
        size = 3 if kind == mujoco.mjtJoint.mjJNT_BALL else 1
        speeds[name] = rng.uniform(0.2, 4.0, size) if size == 3 else float(rng.uniform(0.2, 4.0))
    return speeds


def _collidable_pairs(model: mujoco.MjModel, rng: np.random.Generator) -> list[tuple[int, int]]:
    pairs = [
        (a, b)
        for a in range(model.ngeom)
        for b in range(a + 1, model.ngeom)
        if can_collide(model, a, b)
    ]
    if not pairs:
        return []
    count = min(len(pairs), int(rng.integers(1, 40)))
    picked = rng.choice(len(pairs), size=count, replace=False)
    return [pairs[i] for i in picked]


def random_stack(
    configuration: posekit.Configuration,
    rng: np.random.Generator,
    well_posed: bool = True,
) -> Stack:
    """A random problem on ``configuration`` (module docstring).

    ``well_posed`` keeps the solution insensitive to rounding: a damping of 1e-3 bounds
    the condition number of ``H`` and at most one task is a hard constraint (two may
    have nearly dependent rows). Otherwise the damping may be 1e-12 and DoFs no task
    constrains make condition numbers of 1e8-1e10, where any reordering of the sums
    moves the answer by 1e-9 or more: compare the QP data then, not the solution.
    """
    model = configuration.model
    kinds = [k for k in MAKERS if k != "equality" or model.neq > 0]
    damping = 1e-3 if well_posed else float(rng.choice([1e-12, 1e-6, 1e-3]))
    stack = Stack(limits=limits(configuration, rng), damping=damping)
    most_constraints = 1 if well_posed else 2
    for _ in range(int(rng.integers(1, 7))):
        kind = kinds[int(rng.integers(len(kinds)))]
        task = MAKERS[kind](configuration, rng)
        if (
            kind in CONSTRAINT_KINDS
            and len(stack.constraints) < most_constraints
            and rng.random() < 0.2
        ):
            stack.constraints.append(task)  # type: ignore[arg-type]
        else:
            stack.tasks.append(task)
    return stack
