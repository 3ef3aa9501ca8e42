"""``posture``: the joint configuration toward a target posture, error ``q ⊖ q*``
(:class:`PostureTask`, free joints excluded); target ``{q}`` or ``{keyframe}``.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import mujoco
import numpy as np
from pydantic import ConfigDict, Field

from posekit.ik.tasks import PostureTask
from posekit.sessions.kinds.base import Params, TaskKind, TaskSpecBase
from posekit.sessions.kinds.resolve import per_dof_cost
from posekit.sessions.kinds.target import PostureTarget, Target, vector
from posekit.sessions.kinds.target_shape import PostureShape
from posekit.sessions.specs.types import Gain, LmDamping, MujocoName, NonNegativeFloat

PerJointCost = NonNegativeFloat | dict[MujocoName, NonNegativeFloat]
"""A scalar for every joint, or ``{joint: cost}`` (other joints get 0)."""


class PostureParams(Params):
    """Joint configuration toward a target posture (free joints excluded)."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"cost": 0.001}, {"cost": {"joint1": 0.1, "joint2": 0.01}}]}
    )

    cost: PerJointCost = Field(
        1e-2, description="A scalar for every joint, or {joint: cost} (others get 0)."
    )
    gain: Gain = 1.0
    lm_damping: LmDamping = 0.0


class PostureTaskSpec(TaskSpecBase):
    """Posture task (``PostureTask``)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "posture",
                    "type": "posture",
                    "params": {"cost": 0.001},
                    "target": {"keyframe": "home"},
                }
            ]
        }
    )

    type: Literal["posture"]
    target: PostureTarget | None = Field(
        None, description="Target; when omitted, the current value (the task starts satisfied)."
    )
    params: PostureParams = PostureParams()


class PostureKind(TaskKind[PostureTaskSpec, PostureTask]):
    type = "posture"
    spec_model = PostureTaskSpec
    target_shape: ClassVar[PostureShape] = PostureShape()

    def build(self, spec: PostureTaskSpec, model: mujoco.MjModel, dt: float) -> PostureTask:
        p = spec.params
        return PostureTask(model, per_dof_cost(model, p.cost), p.gain, p.lm_damping)

    def read_target(self, task: PostureTask) -> Target:
        return PostureTarget.model_construct(q=vector(task.target_q))

    def apply_target(self, task: PostureTask, target: Target) -> None:
        task.set_target(np.array(target.q))
