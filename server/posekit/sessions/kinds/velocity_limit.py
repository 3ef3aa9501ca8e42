"""Limit ``velocity``: ``|Δq_i| ≤ v_max,i · dt`` for named joints (:class:`VelocityLimit`)."""

from __future__ import annotations

from typing import Annotated, Literal

import mujoco
from pydantic import ConfigDict, Field

from posekit.ik.exceptions import LimitDefinitionError
from posekit.ik.limits import Limit, VelocityLimit
from posekit.sessions.kinds.base import LimitKind, LimitSpecBase, Params
from posekit.sessions.kinds.resolve import joint_id
from posekit.sessions.specs.types import MujocoName, PositiveFloat

PositiveOr3 = PositiveFloat | Annotated[list[PositiveFloat], Field(min_length=3, max_length=3)]
"""A positive scalar, or three (one per axis)."""


class VelocityLimitParams(Params):
    """Maximum joint speeds (``VelocityLimit``)."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"velocities": {"joint1": 1.5, "joint2": 1.5}}]}
    )

    velocities: dict[MujocoName, PositiveOr3] = Field(
        description="{joint: max speed} in [rad/s] or [m/s]; ball joints: scalar or 3."
    )


class VelocityLimitSpec(LimitSpecBase):
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


class VelocityLimitKind(LimitKind[VelocityLimitSpec]):
    type = "velocity"
    spec_model = VelocityLimitSpec

    def build(self, spec: VelocityLimitSpec, model: mujoco.MjModel) -> Limit:
        for name in spec.params.velocities:
            joint_id(model, name, LimitDefinitionError)
        return VelocityLimit(model, dict(spec.params.velocities))
