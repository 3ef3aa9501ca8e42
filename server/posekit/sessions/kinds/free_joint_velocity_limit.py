"""Limit ``free_joint_velocity``: speeds of a floating base in its own frame
(:class:`FreeJointVelocityLimit`), [m/s] and [rad/s].
"""

from __future__ import annotations

from typing import Literal

import mujoco
from pydantic import ConfigDict, Field, model_validator

from posekit.ik.exceptions import LimitDefinitionError
from posekit.ik.limits import FreeJointVelocityLimit, Limit
from posekit.sessions.kinds.base import LimitKind, LimitSpecBase, Params
from posekit.sessions.kinds.resolve import joint_id
from posekit.sessions.kinds.velocity_limit import PositiveOr3
from posekit.sessions.specs.types import MujocoName


class FreeJointVelocityLimitParams(Params):
    """Maximum floating-base speeds (``FreeJointVelocityLimit``)."""

    model_config = ConfigDict(
        json_schema_extra={
            "anyOf": [  # at least one bound given, not null
                {"required": [bound], "properties": {bound: {"not": {"type": "null"}}}}
                for bound in ("max_linear_velocity", "max_angular_velocity")
            ],
            "examples": [
                {"joint": "root", "max_linear_velocity": 0.5, "max_angular_velocity": [1, 1, 2]}
            ],
        }
    )

    joint: MujocoName | None = Field(None, description="Free joint; optional if only one.")
    max_linear_velocity: PositiveOr3 | None = Field(None, description="[m/s].")
    max_angular_velocity: PositiveOr3 | None = Field(None, description="[rad/s].")

    @model_validator(mode="after")
    def _a_bound(self) -> FreeJointVelocityLimitParams:
        if self.max_linear_velocity is None and self.max_angular_velocity is None:
            raise ValueError("give max_linear_velocity and/or max_angular_velocity")
        return self


class FreeJointVelocityLimitSpec(LimitSpecBase):
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
    params: FreeJointVelocityLimitParams


class FreeJointVelocityLimitKind(LimitKind[FreeJointVelocityLimitSpec]):
    type = "free_joint_velocity"
    spec_model = FreeJointVelocityLimitSpec

    def build(self, spec: FreeJointVelocityLimitSpec, model: mujoco.MjModel) -> Limit:
        p = spec.params
        if p.joint is not None:
            joint_id(model, p.joint, LimitDefinitionError)
        return FreeJointVelocityLimit(
            model, p.max_linear_velocity, p.max_angular_velocity, joint_name=p.joint
        )
