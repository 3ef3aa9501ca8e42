"""``damping``: penalise the joint displacement of each step (:class:`DampingTask`,
free joints excluded); no target.
"""

from __future__ import annotations

from typing import Literal

import mujoco
from pydantic import ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from posekit.ik.tasks import DampingTask
from posekit.sessions.kinds.base import Params, TaskKind, TaskSpecBase
from posekit.sessions.kinds.posture import PerJointCost
from posekit.sessions.kinds.resolve import per_dof_cost


class DampingParams(Params):
    """Penalise joint displacement per step (free joints excluded)."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"cost": 0.001}]})

    cost: PerJointCost = Field(
        1e-3, description="A scalar for every joint, or {joint: cost} (others get 0)."
    )


class DampingTaskSpec(TaskSpecBase):
    """Damping task (``DampingTask``)."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"type": "damping", "params": {"cost": 0.001}}]}
    )

    type: Literal["damping"]
    target: SkipJsonSchema[None] = Field(None, exclude=True)  # no target
    params: DampingParams = DampingParams()


class DampingKind(TaskKind[DampingTaskSpec, DampingTask]):
    type = "damping"
    spec_model = DampingTaskSpec

    def build(self, spec: DampingTaskSpec, model: mujoco.MjModel, dt: float) -> DampingTask:
        return DampingTask(model, per_dof_cost(model, spec.params.cost))
