"""Which task and limit classes the compiled path covers, and how each is packed.

Exact classes only: a subclass may override the math, so it takes the Python path
(:func:`pack_task` and :func:`pack_limit` say so). A new kind is a module with a
``pack`` function and its kernel, one entry here and one branch in the dispatcher
(:mod:`~posekit.ik.compiled.objective_kernel` for tasks,
:mod:`~posekit.ik.compiled.qp_kernel` for limits).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from posekit.ik.compiled import (
    kind_com,
    kind_equality,
    kind_joint_space,
    kind_kinetic_energy,
    kind_mapped_frame,
    kind_relative_frame,
    limit_collision,
    limit_configuration,
    limit_velocity,
)
from posekit.ik.compiled.packing import NotCompiled, PackContext, Packed
from posekit.ik.limits import (
    CollisionAvoidanceLimit,
    ConfigurationLimit,
    FreeJointVelocityLimit,
    VelocityLimit,
)
from posekit.ik.limits.velocity_limit import BoxVelocityLimit
from posekit.ik.tasks import (
    AxisAlignTask,
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

Packer = Callable[[Any, PackContext], Packed]

TASK_PACKERS: dict[type, Packer] = {
    FrameTask: kind_mapped_frame.pack,
    LookAtTask: kind_mapped_frame.pack,
    AxisAlignTask: kind_mapped_frame.pack,
    RelativeFrameTask: kind_relative_frame.pack,
    ComTask: kind_com.pack,
    PostureTask: kind_joint_space.pack_posture,
    DampingTask: kind_joint_space.pack_posture,
    DofFreezingTask: kind_joint_space.pack_dof_freezing,
    EqualityConstraintTask: kind_equality.pack,
    KineticEnergyRegularizationTask: kind_kinetic_energy.pack,
}
LIMIT_PACKERS: dict[type, Packer] = {
    ConfigurationLimit: limit_configuration.pack,
    VelocityLimit: limit_velocity.pack_velocity,
    BoxVelocityLimit: limit_velocity.pack_velocity,
    FreeJointVelocityLimit: limit_velocity.pack_free_joint,
    CollisionAvoidanceLimit: limit_collision.pack,
}


def _packer(table: dict[type, Packer], value: object, what: str) -> Packer:
    packer = table.get(type(value))
    if packer is None:
        name = type(value).__qualname__
        raise NotCompiled(
            f"{what} {name} is not one of the compiled kinds (a subclass or a user-defined "
            f"{what} may change the math)"
        )
    return packer


def pack_task(task: object, context: PackContext) -> Packed:
    """The record of a task in its role; :class:`NotCompiled` when not covered."""
    return _packer(TASK_PACKERS, task, "task")(task, context)


def pack_limit(limit: object, context: PackContext) -> Packed:
    """The record of a limit; :class:`NotCompiled` when not covered."""
    return _packer(LIMIT_PACKERS, limit, "limit")(limit, context)
