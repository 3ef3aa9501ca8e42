"""``frame``: the pose of a body, geom or site in the world (:class:`FrameTask`).

Error ``e = log(T_b⁻¹ T_t)`` in the frame (tangent order (v, ω)); costs are
[cost]/[m] for position and [cost]/[rad] for orientation.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import mujoco
from pydantic import ConfigDict, Field

from posekit.ik.frames import resolve_frame_id
from posekit.ik.tasks import FrameTask
from posekit.robots.presets import task_name
from posekit.sessions.kinds.base import Params, TaskKind, TaskSpecBase
from posekit.sessions.kinds.target import PoseTarget, Target, pose_target, target_pose
from posekit.sessions.kinds.target_shape import PoseShape
from posekit.sessions.specs.types import Cost3, FrameType, Gain, LmDamping, MujocoName


class FrameParams(Params):
    """Pose of a frame in the world."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "frame": "ee",
                    "frame_type": "site",
                    "position_cost": 1.0,
                    "orientation_cost": [1.0, 1.0, 0.0],
                }
            ]
        }
    )

    frame: MujocoName = Field(description="Name of the body, geom or site.")
    frame_type: FrameType = Field("site", description="body | geom | site.")
    position_cost: Cost3 = Field(1.0, description="[cost]/[m]: a scalar or one per axis.")
    orientation_cost: Cost3 = Field(1.0, description="[cost]/[rad]: a scalar or one per axis.")
    gain: Gain = 1.0
    lm_damping: LmDamping = 0.0


class FrameTaskSpec(TaskSpecBase):
    """Frame task (``FrameTask``): a pose target for a body, geom or site."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "ee",
                    "type": "frame",
                    "params": {
                        "frame": "ee",
                        "frame_type": "site",
                        "position_cost": 1.0,
                        "orientation_cost": 0.5,
                    },
                    "target": {"position": [0.45, 0.0, 0.35], "wxyz": [0.0, 1.0, 0.0, 0.0]},
                }
            ]
        }
    )
    type: Literal["frame"]
    target: PoseTarget | None = Field(
        None, description="Target; when omitted, the current value (the task starts satisfied)."
    )
    params: FrameParams


class FrameKind(TaskKind[FrameTaskSpec, FrameTask]):
    type = "frame"
    spec_model = FrameTaskSpec
    target_shape: ClassVar[PoseShape] = PoseShape()

    def build(self, spec: FrameTaskSpec, model: mujoco.MjModel, dt: float) -> FrameTask:
        p = spec.params
        resolve_frame_id(model, p.frame, p.frame_type)
        return FrameTask(
            p.frame, p.frame_type, p.position_cost, p.orientation_cost, p.gain, p.lm_damping
        )

    def read_target(self, task: FrameTask) -> Target:
        return pose_target(task.transform_target_to_world)

    def apply_target(self, task: FrameTask, target: Target) -> None:
        task.set_target(target_pose(target))

    def default_name(self, spec: FrameTaskSpec) -> str:
        return task_name(spec.params.frame)
