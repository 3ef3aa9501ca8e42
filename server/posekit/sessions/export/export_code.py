"""Python source for each task and limit kind: the engine calls its kind's ``build`` makes.

Each function turns a spec into the ``posekit.*`` constructor call (mink's API) that
builds the same engine object from the same values, resolved exactly as the kind
resolves them (per-joint costs as one cost per degree of freedom, joint names as DoF
indices, unnamed equalities as ids), and the calls that set its target. Numbers are
written with ``repr``, which round-trips floats exactly. Used by
:mod:`posekit.sessions.export.export_script`; every registered kind has an entry here (a test
checks it).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from posekit.sessions.kinds import LimitSpecBase, TaskSpecBase
from posekit.sessions.kinds.resolve import equality_refs, joint_dofs, per_dof_cost

LINE = 99  # longer calls are written one argument per line, long vectors wrapped


class Raw(str):
    """Python source written as it is (a variable name), not as a string literal."""


MODEL = Raw("model")  # the script's model variable


def literal(value: Any) -> str:
    """Python source for a JSON-like value on one line (floats exact, strings in double
    quotes); numpy arrays as ``np.array([...])``, calls as written."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, Call):
        return value.render()
    if isinstance(value, str):
        return json.dumps(value)
    if hasattr(value, "tolist"):
        return f"np.array({literal(value.tolist())})"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(literal(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def block(value: Any, indent: str) -> str:
    """:func:`literal` for a value starting a line indented by ``indent``: calls and
    long lists of numbers are spread over lines."""
    if isinstance(value, Call):
        return value.render(indent=indent)
    text = literal(value)
    numbers = hasattr(value, "tolist") or (
        isinstance(value, list) and all(isinstance(v, (int, float)) for v in value)
    )
    if not numbers or len(indent) + len(text) <= LINE:
        return text
    opening, closing = text.index("[") + 1, text.rindex("]")
    items = textwrap.fill(
        text[opening:closing], width=LINE - 1,
        initial_indent=indent + "    ", subsequent_indent=indent + "    ",
    )  # fmt: skip
    return f"{text[:opening]}\n{items},\n{indent}{text[closing:]}"


@dataclass(frozen=True)
class Call:
    """A function call, written on one line when it fits, else one argument per line."""

    function: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)

    def render(self, prefix: str = "", indent: str = "") -> str:
        """The call after ``prefix`` on a line indented by ``indent``."""
        arguments = [("", value) for value in self.args] + [
            (f"{key}=", value) for key, value in self.kwargs.items()
        ]
        short = f"{prefix}{self.function}({', '.join(n + literal(v) for n, v in arguments)})"
        if len(indent) + len(short) <= LINE:
            return short
        inner = indent + "    "
        lines = [f"{inner}{name}{block(value, inner)}," for name, value in arguments]
        return f"{prefix}{self.function}(\n" + "\n".join(lines) + f"\n{indent})"


def call(function: str, *args: Any, **kwargs: Any) -> Call:
    """A :class:`Call` of ``function`` with these arguments."""
    return Call(function, args, kwargs)


@dataclass(frozen=True)
class Code:
    """An engine object's constructor call, the method calls that finish it (on the
    object, e.g. ``set_target``), and a comment on what its values mean."""

    construct: Call
    then: list[Call] = field(default_factory=list)
    comment: str | None = None


def _pose_target(spec: TaskSpecBase) -> list[Call]:
    target = spec.target
    assert target is not None and target.wxyz is not None and target.position is not None
    pose = call("posekit.SE3", np.array([*target.wxyz, *target.position]))  # wxyz, xyz
    return [call("set_target", pose)]


def _vector_target(values: list[float] | None) -> list[Call]:
    return [call("set_target", np.array(values))]


def _frame(spec: Any, model: mujoco.MjModel) -> Code:
    p = spec.params
    construct = call(
        "posekit.FrameTask", p.frame, p.frame_type, position_cost=p.position_cost,
        orientation_cost=p.orientation_cost, gain=p.gain, lm_damping=p.lm_damping,
    )  # fmt: skip
    return Code(construct, _pose_target(spec))


def _relative_frame(spec: Any, model: mujoco.MjModel) -> Code:
    p = spec.params
    construct = call(
        "posekit.RelativeFrameTask", p.frame, p.frame_type, p.root, p.root_type,
        position_cost=p.position_cost, orientation_cost=p.orientation_cost, gain=p.gain,
        lm_damping=p.lm_damping,
    )  # fmt: skip
    return Code(construct, _pose_target(spec), "target pose in the root frame")


def _com(spec: Any, model: mujoco.MjModel) -> Code:
    p = spec.params
    construct = call("posekit.ComTask", p.cost, gain=p.gain, lm_damping=p.lm_damping)
    return Code(construct, _vector_target(spec.target.position))


def _look_at(spec: Any, model: mujoco.MjModel) -> Code:
    p = spec.params
    construct = call(
        "posekit.LookAtTask", p.frame, p.frame_type, axis=p.axis, cost=p.cost, gain=p.gain,
        lm_damping=p.lm_damping,
    )  # fmt: skip
    return Code(construct, _vector_target(spec.target.position))


def _axis_align(spec: Any, model: mujoco.MjModel) -> Code:
    p = spec.params
    construct = call(
        "posekit.AxisAlignTask", p.frame, p.frame_type, axis=p.axis, cost=p.cost, gain=p.gain,
        lm_damping=p.lm_damping,
    )  # fmt: skip
    return Code(construct, _vector_target(spec.target.direction))


def _per_dof_comment(cost: Any) -> str | None:
    return f"cost per degree of freedom, from {cost!r}" if isinstance(cost, dict) else None


def _posture(spec: Any, model: mujoco.MjModel) -> Code:
    p = spec.params
    cost = per_dof_cost(model, p.cost)
    construct = call("posekit.PostureTask", MODEL, cost, gain=p.gain, lm_damping=p.lm_damping)
    return Code(construct, _vector_target(spec.target.q), _per_dof_comment(p.cost))


def _damping(spec: Any, model: mujoco.MjModel) -> Code:
    cost = per_dof_cost(model, spec.params.cost)
    return Code(call("posekit.DampingTask", MODEL, cost), [], _per_dof_comment(spec.params.cost))


def _kinetic_energy(spec: Any, model: mujoco.MjModel) -> Code:
    construct = call("posekit.KineticEnergyRegularizationTask", spec.params.cost)
    return Code(construct, [call("set_dt", Raw("DT"))])


def _equality(spec: Any, model: mujoco.MjModel) -> Code:
    p = spec.params
    refs = equality_refs(model, p.equalities)
    construct = call(
        "posekit.EqualityConstraintTask", MODEL, p.cost, equalities=refs, gain=p.gain,
        lm_damping=p.lm_damping,
    )  # fmt: skip
    return Code(construct, [], f"equalities {p.equalities!r}" if p.equalities else None)


def _dof_freezing(spec: Any, model: mujoco.MjModel) -> Code:
    joints = spec.params.joints
    dofs = [d for name in joints for d in joint_dofs(model, name)]
    construct = call("posekit.DofFreezingTask", MODEL, dofs, gain=spec.params.gain)
    return Code(construct, [], f"the degrees of freedom of {joints!r}")


TASK_CODE: dict[str, Callable[[Any, mujoco.MjModel], Code]] = {
    "frame": _frame,
    "relative_frame": _relative_frame,
    "com": _com,
    "look_at": _look_at,
    "axis_align": _axis_align,
    "equality": _equality,
    "dof_freezing": _dof_freezing,
    "posture": _posture,
    "damping": _damping,
    "kinetic_energy": _kinetic_energy,
}


def _configuration_limit(spec: Any) -> Code:
    p = spec.params
    construct = call(
        "posekit.ConfigurationLimit", MODEL, gain=p.gain,
        min_distance_from_limits=p.min_distance_from_limits,
    )  # fmt: skip
    return Code(construct)


def _velocity_limit(spec: Any) -> Code:
    return Code(call("posekit.VelocityLimit", MODEL, dict(spec.params.velocities)))


def _free_joint_velocity_limit(spec: Any) -> Code:
    p = spec.params
    construct = call(
        "posekit.FreeJointVelocityLimit", MODEL, max_linear_velocity=p.max_linear_velocity,
        max_angular_velocity=p.max_angular_velocity, joint_name=p.joint,
    )  # fmt: skip
    return Code(construct)


def _collision_avoidance_limit(spec: Any) -> Code:
    p = spec.params
    pairs = [(list(a), list(b)) for a, b in p.geom_pairs]
    construct = call(
        "posekit.CollisionAvoidanceLimit", MODEL, geom_pairs=pairs, gain=p.gain,
        minimum_distance_from_collisions=p.minimum_distance_from_collisions,
        collision_detection_distance=p.collision_detection_distance,
        bound_relaxation=p.bound_relaxation,
    )  # fmt: skip
    return Code(construct, [], "pairs of geom or body names")


LIMIT_CODE: dict[str, Callable[[Any], Code]] = {
    "configuration": _configuration_limit,
    "velocity": _velocity_limit,
    "free_joint_velocity": _free_joint_velocity_limit,
    "collision_avoidance": _collision_avoidance_limit,
}


def task_code(spec: TaskSpecBase, model: mujoco.MjModel) -> Code:
    """The engine calls that build the task of ``spec`` (with its target)."""
    return TASK_CODE[spec.type](spec, model)


def limit_code(spec: LimitSpecBase) -> Code:
    """The engine call that builds the limit of ``spec``."""
    return LIMIT_CODE[spec.type](spec)
