"""``equality``: residuals of the model's equality constraints
(:class:`EqualityConstraintTask`); no target.
"""

from __future__ import annotations

from typing import Literal

import mujoco
from pydantic import ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from posekit.ik.tasks import EqualityConstraintTask
from posekit.sessions.kinds.base import Params, TaskKind, TaskSpecBase
from posekit.sessions.kinds.resolve import equality_refs
from posekit.sessions.specs.types import Gain, LmDamping, MujocoName, NonNegativeFloat


class EqualityParams(Params):
    """Residuals of MuJoCo equality constraints."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"equalities": ["#0", "#1"], "cost": 10.0}]}
    )

    equalities: list[MujocoName] | None = Field(
        None, description="Equality names ('#<id>' for unnamed ones); all when null."
    )
    cost: NonNegativeFloat | list[NonNegativeFloat] = Field(
        1.0, description="A scalar, or one per listed equality."
    )
    gain: Gain = 1.0
    lm_damping: LmDamping = 0.0


class EqualityTaskSpec(TaskSpecBase):
    """Equality-constraint task (``EqualityConstraintTask``)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"type": "equality", "role": "constraint", "params": {"equalities": ["#0"]}}
            ]
        }
    )

    type: Literal["equality"]
    target: SkipJsonSchema[None] = Field(None, exclude=True)  # no target
    params: EqualityParams = EqualityParams()


class EqualityKind(TaskKind[EqualityTaskSpec, EqualityConstraintTask]):
    type = "equality"
    spec_model = EqualityTaskSpec

    def build(
        self, spec: EqualityTaskSpec, model: mujoco.MjModel, dt: float
    ) -> EqualityConstraintTask:
        p = spec.params
        return EqualityConstraintTask(
            model, p.cost, equality_refs(model, p.equalities), p.gain, p.lm_damping
        )
