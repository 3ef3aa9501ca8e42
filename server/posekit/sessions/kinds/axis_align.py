"""``axis_align``: point a unit axis ``a`` of a frame along a world direction ``t``
(:class:`AxisAlignTask`), error ``a − Rᵀt`` (unitless). The gizmo is drawn at the frame.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import mujoco
import numpy as np
from pydantic import ConfigDict, Field

from posekit.ik.frames import resolve_frame_id
from posekit.ik.tasks import AxisAlignTask
from posekit.sessions.kinds.base import TaskKind, TaskSpecBase
from posekit.sessions.kinds.pointing_params import PointingParams
from posekit.sessions.kinds.target import DirectionTarget, Target, vector
from posekit.sessions.kinds.target_shape import DirectionShape
from posekit.sessions.specs.types import FrameType


class AxisAlignTaskSpec(TaskSpecBase):
    """Axis-align task (``AxisAlignTask``): point a frame axis along a direction."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "tool_down",
                    "type": "axis_align",
                    "params": {"frame": "ee", "axis": [0, 0, 1]},
                    "target": {"direction": [0, 0, -1]},
                }
            ]
        }
    )

    type: Literal["axis_align"]
    target: DirectionTarget | None = Field(
        None, description="Target; when omitted, the current value (the task starts satisfied)."
    )
    params: PointingParams


class AxisAlignKind(TaskKind[AxisAlignTaskSpec, AxisAlignTask]):
    type = "axis_align"
    spec_model = AxisAlignTaskSpec
    target_shape: ClassVar[DirectionShape] = DirectionShape()

    def build(self, spec: AxisAlignTaskSpec, model: mujoco.MjModel, dt: float) -> AxisAlignTask:
        p = spec.params
        resolve_frame_id(model, p.frame, p.frame_type)
        return AxisAlignTask(p.frame, p.frame_type, p.axis, p.cost, p.gain, p.lm_damping)

    def read_target(self, task: AxisAlignTask) -> Target:
        return DirectionTarget.model_construct(direction=vector(task.target_dir))

    def apply_target(self, task: AxisAlignTask, target: Target) -> None:
        task.set_target(np.array(target.direction))

    def gizmo_anchor(self, spec: AxisAlignTaskSpec) -> tuple[str, FrameType]:
        return spec.params.frame, spec.params.frame_type
