"""``relative_frame``: the pose of a frame in another (root) frame of the robot
(:class:`RelativeFrameTask`); the target is expressed in the root frame.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import mujoco
from pydantic import ConfigDict, Field

from posekit.ik.frames import resolve_frame_id
from posekit.ik.tasks import RelativeFrameTask
from posekit.sessions.kinds.base import TaskKind, TaskSpecBase
from posekit.sessions.kinds.frame import FrameParams
from posekit.sessions.kinds.target import PoseTarget, Target, pose_target, target_pose
from posekit.sessions.kinds.target_shape import PoseShape
from posekit.sessions.specs.types import FrameType, MujocoName


class RelativeFrameParams(FrameParams):
    """Pose of a frame in another (root) frame of the robot."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "frame": "left_hand",
                    "frame_type": "site",
                    "root": "torso",
                    "root_type": "body",
                    "position_cost": 1.0,
                    "orientation_cost": 0.0,
                }
            ]
        }
    )

    root: MujocoName = Field(description="Name of the root body, geom or site.")
    root_type: FrameType = Field("body", description="body | geom | site.")


class RelativeFrameTaskSpec(TaskSpecBase):
    """Relative frame task (``RelativeFrameTask``): a pose in another robot frame."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "hand_in_torso",
                    "type": "relative_frame",
                    "params": {"frame": "left_hand", "root": "torso"},
                    "target": {"position": [0.3, 0.2, -0.1], "wxyz": [1, 0, 0, 0]},
                }
            ]
        }
    )

    type: Literal["relative_frame"]
    target: PoseTarget | None = Field(
        None, description="Target; when omitted, the current value (the task starts satisfied)."
    )
    params: RelativeFrameParams


class RelativeFrameKind(TaskKind[RelativeFrameTaskSpec, RelativeFrameTask]):
    type = "relative_frame"
    spec_model = RelativeFrameTaskSpec
    target_shape: ClassVar[PoseShape] = PoseShape()

    def build(
        self, spec: RelativeFrameTaskSpec, model: mujoco.MjModel, dt: float
    ) -> RelativeFrameTask:
        p = spec.params
        resolve_frame_id(model, p.frame, p.frame_type)
        resolve_frame_id(model, p.root, p.root_type)
        return RelativeFrameTask(
            p.frame,
            p.frame_type,
            p.root,
            p.root_type,
            p.position_cost,
            p.orientation_cost,
            p.gain,
            p.lm_damping,
        )

    def read_target(self, task: RelativeFrameTask) -> Target:
        return pose_target(task.transform_target_to_root)

    def apply_target(self, task: RelativeFrameTask, target: Target) -> None:
        task.set_target(target_pose(target))

    def gizmo_anchor(self, spec: RelativeFrameTaskSpec) -> tuple[str, FrameType]:
        return spec.params.root, spec.params.root_type
