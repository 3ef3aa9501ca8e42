"""Task targets: one loose :class:`Target` model and its shapes' models (the shapes
that check, complete and normalise a target: :mod:`~posekit.sessions.kinds.target_shape`).

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

from typing import Any, Literal

import numpy as np
from pydantic import (
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from posekit.ik.exceptions import TargetNotSet
from posekit.ik.lie import SE3
from posekit.sessions.specs.types import (
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


TARGET_FIELDS: tuple[str, ...] = tuple(Target.model_fields)
"""The fields of a :class:`Target`, in order."""


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


def pose_target(pose: SE3 | None) -> Target:
    """A pose target from an engine pose (:class:`TargetNotSet` when there is none)."""
    if pose is None:
        raise TargetNotSet("the task")
    values = pose.wxyz_xyz.tolist()
    return PoseTarget.model_construct(position=values[4:], wxyz=values[:4])


def target_pose(target: Target) -> SE3:
    """The engine pose of a canonical pose target."""
    return SE3(np.array([*(target.wxyz or ()), *(target.position or ())]))


def vector(values: np.ndarray | None) -> list[float]:
    """An engine target vector as a list (:class:`TargetNotSet` when there is none)."""
    if values is None:
        raise TargetNotSet("the task")
    return [float(v) for v in values]
