"""Limit specs: a tagged union on ``type``, one variant per engine limit.

Every spec is ``{name, type, enabled, params}``; joints and geoms are named.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from posekit.sessions.types import (
    FiniteFloat,
    MujocoName,
    Name,
    NonNegativeFloat,
    PositiveFloat,
)

_PositiveOr3 = PositiveFloat | Annotated[list[PositiveFloat], Field(min_length=3, max_length=3)]


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ConfigurationLimitParams(_Params):
    """Joint ranges (``ConfigurationLimit``)."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"gain": 0.95, "min_distance_from_limits": 0.01}]}
    )

    gain: float = Field(
        0.95, gt=0.0, le=1.0, strict=True, description="Fraction of the margin per step."
    )
    min_distance_from_limits: NonNegativeFloat = Field(0.0, description="[rad] or [m].")


class VelocityLimitParams(_Params):
    """Maximum joint speeds (``VelocityLimit``)."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"velocities": {"joint1": 1.5, "joint2": 1.5}}]}
    )

    velocities: dict[MujocoName, _PositiveOr3] = Field(
        description="{joint: max speed} in [rad/s] or [m/s]; ball joints: scalar or 3."
    )


class FreeJointVelocityLimitParams(_Params):
    """Maximum floating-base speeds (``FreeJointVelocityLimit``)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"joint": "root", "max_linear_velocity": 0.5, "max_angular_velocity": [1, 1, 2]}
            ]
        }
    )

    joint: MujocoName | None = Field(None, description="Free joint; optional if only one.")
    max_linear_velocity: _PositiveOr3 | None = Field(None, description="[m/s].")
    max_angular_velocity: _PositiveOr3 | None = Field(None, description="[rad/s].")


GeomSide = Annotated[list[MujocoName], Field(min_length=1)]


class CollisionAvoidanceParams(_Params):
    """Keep geom pairs apart (``CollisionAvoidanceLimit``)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "geom_pairs": [[["hand", "left_finger", "right_finger"], ["floor"]]],
                    "minimum_distance_from_collisions": 0.01,
                    "collision_detection_distance": 0.05,
                }
            ]
        }
    )

    geom_pairs: Annotated[list[tuple[GeomSide, GeomSide]], Field(min_length=1)] = Field(
        description="Pair groups [A, B]: lists of geom or body names; every geom of A "
        "against every geom of B."
    )
    gain: float = Field(0.85, gt=0.0, le=1.0, strict=True)
    minimum_distance_from_collisions: FiniteFloat = Field(
        0.005, description="[m]; negative allows that much penetration."
    )
    collision_detection_distance: FiniteFloat = Field(
        0.01, description="[m]; at least minimum_distance_from_collisions."
    )
    bound_relaxation: FiniteFloat = Field(0.0, description="[m].")


class _LimitSpecBase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Name | None = Field(None, description="Unique in the session; the type when omitted.")
    enabled: bool = True


class ConfigurationLimitSpec(_LimitSpecBase):
    """Joint ranges."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"name": "configuration", "type": "configuration"}]}
    )

    type: Literal["configuration"]
    params: ConfigurationLimitParams = ConfigurationLimitParams()


class VelocityLimitSpec(_LimitSpecBase):
    """Joint speeds."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"type": "velocity", "params": {"velocities": {"joint1": 1.0, "joint2": 1.0}}}
            ]
        }
    )
    type: Literal["velocity"]
    params: VelocityLimitParams


class FreeJointVelocityLimitSpec(_LimitSpecBase):
    """Floating-base speeds."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "type": "free_joint_velocity",
                    "params": {"max_linear_velocity": 0.5, "max_angular_velocity": 1.0},
                }
            ]
        }
    )

    type: Literal["free_joint_velocity"]
    params: FreeJointVelocityLimitParams = FreeJointVelocityLimitParams()


class CollisionAvoidanceLimitSpec(_LimitSpecBase):
    """Collision avoidance between geom groups."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "type": "collision_avoidance",
                    "params": {"geom_pairs": [[["hand", "left_finger"], ["floor"]]]},
                }
            ]
        }
    )
    type: Literal["collision_avoidance"]
    params: CollisionAvoidanceParams


LimitSpec = Annotated[
    ConfigurationLimitSpec
    | VelocityLimitSpec
    | FreeJointVelocityLimitSpec
    | CollisionAvoidanceLimitSpec,
    Field(discriminator="type"),
]
LIMIT_SPEC_ADAPTER: TypeAdapter[LimitSpec] = TypeAdapter(LimitSpec)
LIMIT_TYPES = ("configuration", "velocity", "free_joint_velocity", "collision_avoidance")


class LimitPatch(BaseModel):
    """A PATCH of a limit: ``enabled`` and/or params of its type, given flat.

    Any field other than ``enabled`` replaces the param of that name; it is validated
    against the limit's type (an unknown name is a 422 listing the valid ones).
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "examples": [{"enabled": False}, {"gain": 0.5}, {"velocities": {"joint1": 0.5}}]
        },
    )

    enabled: bool | None = None

    def param_updates(self) -> dict[str, Any]:
        """The params to replace."""
        return dict(self.model_extra or {})
