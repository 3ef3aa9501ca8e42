"""Task targets: one loose :class:`Target` model, and the target shapes that check,
complete and normalise it.

Shapes (positions in [m], in the world unless the kind says otherwise):

=============  ===========================================================
pose           ``{position, wxyz}``; either may be sent alone, the other is kept
point          ``{position}``
direction      ``{direction}``, normalised
posture        ``{q}`` (size nq) or ``{keyframe}`` (stored as its q)
=============  ===========================================================

A *canonical* target is complete and normalised: a pose has both fields and a unit
quaternion, a direction is a unit vector, a posture is ``q`` of size nq.
"""

from __future__ import annotations

import math
import operator
from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping
from typing import Any, ClassVar, Literal, NamedTuple

import mujoco
import numpy as np
from pydantic import (
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from posekit.ik.exceptions import InvalidTarget, TargetNotSet
from posekit.ik.keyframes import keyframe_q
from posekit.ik.lie import SE3
from posekit.sessions.errors import InvalidRequest
from posekit.sessions.kinds.trusted import construct
from posekit.sessions.types import (
    LeaveOut,
    MujocoName,
    Quaternion,
    Vec3,
    Vector,
    exactly_one_of,
)

GizmoShape = Literal["pose", "point", "direction"]


class Target(LeaveOut):
    """A task target; which fields apply depends on the task's kind (module docstring).

    The API's task specs and patches take the kind's own target model (:class:`PoseTarget`,
    :class:`PointTarget`, :class:`DirectionTarget`, :class:`PostureTarget`), whose schema
    lists exactly its fields; this loose one carries any target inside the server.
    """

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"position": [0.45, 0.0, 0.35], "wxyz": [0.0, 1.0, 0.0, 0.0]},
                {"position": [0.6, 0.2, 0.3]},
                {"direction": [0.0, 0.0, -1.0]},
                {"keyframe": "home"},
            ]
        },
    )

    position: Vec3 | SkipJsonSchema[None] = Field(None, description="Point or pose position [m].")
    wxyz: Quaternion | SkipJsonSchema[None] = Field(
        None, description="Pose orientation (w, x, y, z)."
    )
    direction: Vec3 | SkipJsonSchema[None] = Field(
        None, description="Direction (normalised on use)."
    )
    q: Vector | SkipJsonSchema[None] = Field(
        None, description="Posture: a configuration of size nq."
    )
    keyframe: MujocoName | SkipJsonSchema[None] = Field(
        None, description="Posture: a keyframe name."
    )

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Serialise only the fields that are set (a pose is ``{position, wxyz}``)."""
        return {k: v for k, v in handler(self).items() if v is not None}

    def given(self) -> list[str]:
        """Names of the fields that are set."""
        return [k for k in TARGET_FIELDS if getattr(self, k) is not None]

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as the field values (targets cross the pipe to the solver process
        thousands of times a second; pydantic's pickling carries its whole state)."""
        return target_of_values, packed_target(self)


TARGET_FIELDS: tuple[str, ...] = tuple(Target.model_fields)
"""The fields of a :class:`Target`, in order."""

_field_values = operator.attrgetter(*TARGET_FIELDS)


class CanonicalFields(NamedTuple):
    """A canonical target's field values by name, as a kind's ``apply_target`` reads
    them: a moved target is applied to its engine task from these, its model built only
    when its spec is read (:mod:`~posekit.sessions.stack`)."""

    position: list[float] | None
    wxyz: list[float] | None
    direction: list[float] | None
    q: list[float] | None
    keyframe: str | None


assert CanonicalFields._fields == TARGET_FIELDS
AnyTarget = Target | CanonicalFields
"""A target model, or its canonical values by name (what ``apply_target`` takes)."""


def packed_target(target: Target) -> tuple[int, tuple[Any, ...]]:
    """A target as plain values: the index of its model in :data:`TARGET_MODELS` and its
    field values (pickled with no reference to a class: pickle imports the module of
    each class and function it names, several µs each)."""
    return TARGET_MODELS.index(type(target)), _field_values(target)


def target_of_values(model: int, values: tuple[Any, ...]) -> Target:
    """The target :func:`packed_target` packed (the same model, the same fields set)."""
    return construct(
        TARGET_MODELS[model],
        **{k: v for k, v in zip(TARGET_FIELDS, values, strict=True) if v is not None},
    )


class PoseTarget(Target):
    """A pose in [m] and a unit quaternion: either may be sent alone (the other is kept)."""

    model_config = ConfigDict(
        json_schema_extra={
            "minProperties": 1,
            "examples": [
                {"position": [0.45, 0.0, 0.35], "wxyz": [0.0, 1.0, 0.0, 0.0]},
                {"position": [0.5, 0.1, 0.3]},
            ],
        }
    )

    direction: SkipJsonSchema[None] = None
    q: SkipJsonSchema[None] = None
    keyframe: SkipJsonSchema[None] = None

    @model_validator(mode="after")
    def _something(self) -> PoseTarget:
        if not self.given():
            raise ValueError("a pose target takes position and/or wxyz")
        return self


class PointTarget(Target):
    """A point [m]."""

    model_config = ConfigDict(
        json_schema_extra={"required": ["position"], "examples": [{"position": [0.6, 0.2, 0.3]}]}
    )

    wxyz: SkipJsonSchema[None] = None
    direction: SkipJsonSchema[None] = None
    q: SkipJsonSchema[None] = None
    keyframe: SkipJsonSchema[None] = None

    @model_validator(mode="after")
    def _position(self) -> PointTarget:
        if self.position is None:
            raise ValueError("a point target takes position")
        return self


class DirectionTarget(Target):
    """A direction (normalised on use)."""

    model_config = ConfigDict(
        json_schema_extra={"required": ["direction"], "examples": [{"direction": [0, 0, -1]}]}
    )

    position: SkipJsonSchema[None] = None
    wxyz: SkipJsonSchema[None] = None
    q: SkipJsonSchema[None] = None
    keyframe: SkipJsonSchema[None] = None

    @model_validator(mode="after")
    def _direction(self) -> DirectionTarget:
        if self.direction is None:
            raise ValueError("a direction target takes direction")
        return self


class PostureTarget(Target):
    """A configuration of size nq, or a keyframe name (exactly one)."""

    model_config = ConfigDict(
        json_schema_extra={
            **exactly_one_of("q", "keyframe"),
            "examples": [{"keyframe": "home"}, {"q": [0.0, 0.4, 0.0, -1.2, 0.0, 1.4, 0.0]}],
        }
    )

    position: SkipJsonSchema[None] = None
    wxyz: SkipJsonSchema[None] = None
    direction: SkipJsonSchema[None] = None

    @model_validator(mode="after")
    def _one(self) -> PostureTarget:
        if len(self.given()) != 1:
            raise ValueError("a posture target takes exactly one of q or keyframe")
        return self


TARGET_MODELS: tuple[type[Target], ...] = (
    Target,
    PoseTarget,
    PointTarget,
    DirectionTarget,
    PostureTarget,
)
"""Every target model, in a fixed order (how a pickled target names its model)."""


def unit(values: list[float], what: str) -> list[float]:
    """``values / ‖values‖``; :class:`InvalidTarget` when the norm is below 1e-9."""
    # Plain loops: the same floats as sum(map(operator.mul, ...)) (the squares added in
    # order) and a comprehension, at 60 % of their cost (a moved pose target comes here).
    squares = 0.0
    for v in values:
        squares += v * v
    norm = math.sqrt(squares)
    if norm < 1e-9:
        raise InvalidTarget(f"{what} must be non-zero, got {values}")
    scaled: list[float] = []
    for v in values:
        scaled.append(v / norm)
    return scaled


def is_unit(values: list[float] | None) -> bool:
    """Whether ``values`` is a vector of norm 1 (to 1e-12), as :func:`unit` makes them."""
    return values is not None and abs(sum(map(operator.mul, values, values)) - 1.0) <= 1e-12


TargetValues = tuple[Any, ...]
"""A target's field values in :data:`TARGET_FIELDS` order (None where not set)."""


class TargetShape(ABC):
    """What a kind's target looks like, and how an update completes it.

    An update is completed on plain values (:meth:`complete`): the field values given
    by name, and the current target's values; :meth:`merge` does the same for models.
    """

    model: ClassVar[type[Target]]
    """The API's model of this shape (its schema lists exactly :attr:`fields`)."""
    fields: ClassVar[tuple[str, ...]]
    field_set: ClassVar[frozenset[str]]  # the same, as a set
    model_index: ClassVar[int]  # the index of :attr:`model` in TARGET_MODELS
    combine: ClassVar[str] = " or "  # how the fields are listed in errors
    gizmo: ClassVar[GizmoShape | None] = None

    def check(self, update: Target, where: str) -> None:
        """Raise :class:`InvalidRequest` unless ``update`` sets only (and some of) our fields."""
        self.check_given(update.given(), where)  # (in field order)

    def check_given(self, given: Collection[str], where: str) -> None:
        """:meth:`check` of an update that sets the fields named in ``given``."""
        if given and self.field_set.issuperset(given):
            return
        wrong = [f for f in TARGET_FIELDS if f in given and f not in self.fields]
        if wrong or not given:
            what = f"fields {wrong}" if wrong else "no field"
            raise InvalidRequest(
                f"target of {where} has {what}; it takes {self.combine.join(self.fields)}"
            )

    def merge(
        self, current: Target | None, update: Target, model: mujoco.MjModel, where: str
    ) -> Target:
        """The canonical target after applying ``update`` to ``current``; ``update``
        itself when it is canonical already (a replayed change)."""
        self.check(update, where)
        if isinstance(update, self.model) and self._canonical(update, model):
            return update
        given = {k: v for k in TARGET_FIELDS if (v := getattr(update, k)) is not None}
        values = self.complete(
            None if current is None else _field_values(current), given, model, where
        )
        return target_of_values(self.model_index, values)

    def _canonical(self, target: Target, model: mujoco.MjModel) -> bool:
        """Whether ``target`` (of this shape's model, checked) is complete and normalised."""
        return False

    @abstractmethod
    def complete(
        self,
        current: TargetValues | None,
        given: Mapping[str, Any],
        model: mujoco.MjModel,
        where: str,
    ) -> TargetValues:
        """The canonical target's values after an update that sets the fields ``given``
        (valid values of :class:`Target` fields, checked by :meth:`check_given`) to the
        current target's values ``current`` (canonical; None: no target yet)."""


class PoseShape(TargetShape):
    model = PoseTarget
    fields = ("position", "wxyz")
    field_set = frozenset(fields)
    model_index = TARGET_MODELS.index(model)
    combine = " and/or "
    gizmo: ClassVar[GizmoShape | None] = "pose"

    def complete(
        self,
        current: TargetValues | None,
        given: Mapping[str, Any],
        model: mujoco.MjModel,
        where: str,
    ) -> TargetValues:
        position = given.get("position") or (current[0] if current else None)
        wxyz = given.get("wxyz") or (current[1] if current else None)
        if position is None or wxyz is None:
            raise InvalidRequest(f"target of {where} needs both position and wxyz")
        # Values are validated already (finite, right sizes): no model is built here.
        return (list(position), unit(list(wxyz), "wxyz"), None, None, None)

    def _canonical(self, target: Target, model: mujoco.MjModel) -> bool:
        return target.position is not None and is_unit(target.wxyz)


class PointShape(TargetShape):
    model = PointTarget
    fields = ("position",)
    field_set = frozenset(fields)
    model_index = TARGET_MODELS.index(model)
    gizmo: ClassVar[GizmoShape | None] = "point"

    def complete(
        self,
        current: TargetValues | None,
        given: Mapping[str, Any],
        model: mujoco.MjModel,
        where: str,
    ) -> TargetValues:
        return (list(given.get("position") or []), None, None, None, None)

    def _canonical(self, target: Target, model: mujoco.MjModel) -> bool:
        return True


class DirectionShape(TargetShape):
    model = DirectionTarget
    fields = ("direction",)
    field_set = frozenset(fields)
    model_index = TARGET_MODELS.index(model)
    gizmo: ClassVar[GizmoShape | None] = "direction"

    def complete(
        self,
        current: TargetValues | None,
        given: Mapping[str, Any],
        model: mujoco.MjModel,
        where: str,
    ) -> TargetValues:
        return (None, None, unit(list(given.get("direction") or []), "direction"), None, None)

    def _canonical(self, target: Target, model: mujoco.MjModel) -> bool:
        return is_unit(target.direction)


class PostureShape(TargetShape):
    model = PostureTarget
    fields = ("q", "keyframe")
    field_set = frozenset(fields)
    model_index = TARGET_MODELS.index(model)

    def check_given(self, given: Collection[str], where: str) -> None:
        super().check_given(given, where)
        if len(given) != 1:
            raise InvalidRequest(f"target of {where} takes q or keyframe, not both")

    def complete(
        self,
        current: TargetValues | None,
        given: Mapping[str, Any],
        model: mujoco.MjModel,
        where: str,
    ) -> TargetValues:
        keyframe = given.get("keyframe")
        if keyframe is not None:
            return (None, None, None, keyframe_q(model, keyframe).tolist(), None)
        q = list(given.get("q") or [])
        if len(q) != model.nq:
            raise InvalidTarget(f"posture target q must have nq={model.nq} values, got {len(q)}")
        return (None, None, None, q, None)

    def _canonical(self, target: Target, model: mujoco.MjModel) -> bool:
        return target.q is not None and len(target.q) == model.nq


def pose_target(pose: SE3 | None) -> Target:
    """A pose target from an engine pose (:class:`TargetNotSet` when there is none)."""
    if pose is None:
        raise TargetNotSet("the task")
    values = pose.wxyz_xyz.tolist()
    return construct(PoseTarget, position=values[4:], wxyz=values[:4])


def target_pose(target: AnyTarget) -> SE3:
    """The engine pose of a canonical pose target."""
    return SE3(np.array([*(target.wxyz or ()), *(target.position or ())]))


def vector(values: np.ndarray | None) -> list[float]:
    """An engine target vector as a list (:class:`TargetNotSet` when there is none)."""
    if values is None:
        raise TargetNotSet("the task")
    return [float(v) for v in values]
