"""``look_at``: aim a unit axis ``a`` of a frame at a point ``p*`` of the world
(:class:`LookAtTask`), error ``a − R⁻¹(p* − p)/‖p* − p‖`` (unitless).
"""

from __future__ import annotations

from typing import ClassVar, Literal

import mujoco
import numpy as np
from pydantic import ConfigDict, Field

from posekit.ik.frames import resolve_frame_id
from posekit.ik.tasks import LookAtTask
from posekit.sessions.kinds.base import TaskKind, TaskSpecBase
from posekit.sessions.kinds.pointing_params import PointingParams
from posekit.sessions.kinds.target import PointTarget, Target, vector
from posekit.sessions.kinds.target_shape import PointShape


class LookAtTaskSpec(TaskSpecBase):
    """Look-at task (``LookAtTask``): aim a frame axis at a point."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "camera",
                    "type": "look_at",
                    "params": {"frame": "wrist_cam", "axis": [0, 0, -1], "cost": 0.5},
                    "target": {"position": [0.6, 0.0, 0.0]},
                }
            ]
        }
    )
    type: Literal["look_at"]
    target: PointTarget | None = Field(
        None, description="Target; when omitted, the current value (the task starts satisfied)."
    )
    params: PointingParams


class LookAtKind(TaskKind[LookAtTaskSpec, LookAtTask]):
    type = "look_at"
    spec_model = LookAtTaskSpec
    target_shape: ClassVar[PointShape] = PointShape()

    def build(self, spec: LookAtTaskSpec, model: mujoco.MjModel, dt: float) -> LookAtTask:
        p = spec.params
        resolve_frame_id(model, p.frame, p.frame_type)
        return LookAtTask(p.frame, p.frame_type, p.axis, p.cost, p.gain, p.lm_damping)

    def read_target(self, task: LookAtTask) -> Target:
        return PointTarget.model_construct(position=vector(task.target_pos))

    def apply_target(self, task: LookAtTask, target: Target) -> None:
        task.set_target(np.array(target.position))
