"""``com``: the position of the center of mass in the world (:class:`ComTask`),
error ``c − c*`` in [m].
"""

from __future__ import annotations

from typing import ClassVar, Literal

import mujoco
import numpy as np
from pydantic import ConfigDict, Field

from posekit.ik.tasks import ComTask
from posekit.sessions.kinds.base import Params, TaskKind, TaskSpecBase
from posekit.sessions.kinds.target import PointTarget, Target, vector
from posekit.sessions.kinds.target_shape import PointShape
from posekit.sessions.specs.types import Cost3, Gain, LmDamping


class ComParams(Params):
    """Position of the center of mass."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"cost": [1.0, 1.0, 0.0]}]})

    cost: Cost3 = Field(1.0, description="[cost]/[m]: a scalar or one per axis.")
    gain: Gain = 1.0
    lm_damping: LmDamping = 0.0


class ComTaskSpec(TaskSpecBase):
    """Center-of-mass task (``ComTask``)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "com",
                    "type": "com",
                    "params": {"cost": 1.0},
                    "target": {"position": [0.0, 0.0, 0.8]},
                }
            ]
        }
    )

    type: Literal["com"]
    target: PointTarget | None = Field(
        None, description="Target; when omitted, the current value (the task starts satisfied)."
    )
    params: ComParams = ComParams()


class ComKind(TaskKind[ComTaskSpec, ComTask]):
    type = "com"
    spec_model = ComTaskSpec
    target_shape: ClassVar[PointShape] = PointShape()

    def build(self, spec: ComTaskSpec, model: mujoco.MjModel, dt: float) -> ComTask:
        p = spec.params
        return ComTask(p.cost, p.gain, p.lm_damping)

    def read_target(self, task: ComTask) -> Target:
        return PointTarget.model_construct(position=vector(task.target_com))

    def apply_target(self, task: ComTask, target: Target) -> None:
        task.set_target(np.array(target.position))
