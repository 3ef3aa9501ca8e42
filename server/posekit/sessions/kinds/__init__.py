"""Task and limit kinds: one module per API type, registered here.

Adding a kind is adding one module (its spec model and :class:`TaskKind` or
:class:`LimitKind`) and one line below; the tagged unions :data:`TaskSpec` and
:data:`LimitSpec` (on ``type``), :data:`TASK_TYPES` and :data:`LIMIT_TYPES` follow from
the registry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, TypeAlias, Union

from pydantic import BaseModel, Field, TypeAdapter

from posekit.sessions.kinds.axis_align import AxisAlignKind
from posekit.sessions.kinds.base import (
    AnyLimitKind,
    AnyTaskKind,
    LimitKind,
    LimitSpecBase,
    TaskKind,
    TaskSpecBase,
)
from posekit.sessions.kinds.collision_avoidance_limit import CollisionAvoidanceLimitKind
from posekit.sessions.kinds.com import ComKind
from posekit.sessions.kinds.configuration_limit import ConfigurationLimitKind
from posekit.sessions.kinds.damping import DampingKind
from posekit.sessions.kinds.dof_freezing import DofFreezingKind
from posekit.sessions.kinds.equality import EqualityKind
from posekit.sessions.kinds.frame import FrameKind
from posekit.sessions.kinds.free_joint_velocity_limit import FreeJointVelocityLimitKind
from posekit.sessions.kinds.kinetic_energy import KineticEnergyKind
from posekit.sessions.kinds.look_at import LookAtKind
from posekit.sessions.kinds.patch import LimitPatch, TaskPatch
from posekit.sessions.kinds.posture import PostureKind
from posekit.sessions.kinds.relative_frame import RelativeFrameKind
from posekit.sessions.kinds.target import GizmoShape, Target
from posekit.sessions.kinds.velocity_limit import VelocityLimitKind

TASK_KINDS: dict[str, AnyTaskKind] = {
    kind.type: kind
    for kind in (
        FrameKind(),
        RelativeFrameKind(),
        ComKind(),
        LookAtKind(),
        AxisAlignKind(),
        EqualityKind(),
        DofFreezingKind(),
        PostureKind(),
        DampingKind(),
        KineticEnergyKind(),
    )
}
LIMIT_KINDS: dict[str, AnyLimitKind] = {
    kind.type: kind
    for kind in (
        ConfigurationLimitKind(),
        VelocityLimitKind(),
        FreeJointVelocityLimitKind(),
        CollisionAvoidanceLimitKind(),
    )
}
TASK_TYPES: tuple[str, ...] = tuple(TASK_KINDS)
LIMIT_TYPES: tuple[str, ...] = tuple(LIMIT_KINDS)

if TYPE_CHECKING:  # every variant is a TaskSpecBase / LimitSpecBase
    TaskSpec: TypeAlias = TaskSpecBase
    LimitSpec: TypeAlias = LimitSpecBase
    TaskPatchBody: TypeAlias = BaseModel
    LimitPatchBody: TypeAlias = BaseModel
else:
    TaskSpec = Annotated[
        Union[tuple(kind.spec_model for kind in TASK_KINDS.values())],  # noqa: UP007
        Field(discriminator="type"),
    ]
    LimitSpec = Annotated[
        Union[tuple(kind.spec_model for kind in LIMIT_KINDS.values())],  # noqa: UP007
        Field(discriminator="type"),
    ]
    TaskPatchBody = Union[tuple(kind.patch_model for kind in TASK_KINDS.values())]  # noqa: UP007
    """``PATCH …/tasks/{name}``: the fields of one kind (any of them; the task's decides)."""
    LimitPatchBody = Union[tuple(kind.patch_model for kind in LIMIT_KINDS.values())]  # noqa: UP007
TASK_SPEC_ADAPTER: TypeAdapter[TaskSpec] = TypeAdapter(TaskSpec)
LIMIT_SPEC_ADAPTER: TypeAdapter[LimitSpec] = TypeAdapter(LimitSpec)


def task_kind(spec: TaskSpecBase) -> AnyTaskKind:
    """The kind of a task spec."""
    return TASK_KINDS[spec.type]


def limit_kind(spec: LimitSpecBase) -> AnyLimitKind:
    """The kind of a limit spec."""
    return LIMIT_KINDS[spec.type]


def as_task_spec(value: TaskSpecBase | dict[str, Any]) -> TaskSpecBase:
    """A task spec model from a model or its JSON-like dict (pydantic errors on bad input)."""
    return value if isinstance(value, TaskSpecBase) else TASK_SPEC_ADAPTER.validate_python(value)


def as_limit_spec(value: LimitSpecBase | dict[str, Any]) -> LimitSpecBase:
    """A limit spec model from a model or its JSON-like dict (pydantic errors on bad input)."""
    return value if isinstance(value, LimitSpecBase) else LIMIT_SPEC_ADAPTER.validate_python(value)


__all__ = [
    "LIMIT_KINDS",
    "LIMIT_SPEC_ADAPTER",
    "LIMIT_TYPES",
    "TASK_KINDS",
    "TASK_SPEC_ADAPTER",
    "TASK_TYPES",
    "GizmoShape",
    "LimitKind",
    "LimitPatch",
    "LimitPatchBody",
    "LimitSpec",
    "LimitSpecBase",
    "Target",
    "TaskKind",
    "TaskPatch",
    "TaskPatchBody",
    "TaskSpec",
    "TaskSpecBase",
    "as_limit_spec",
    "as_task_spec",
    "limit_kind",
    "task_kind",
]
