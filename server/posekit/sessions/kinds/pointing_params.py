"""Params shared by the pointing kinds (``look_at``, ``axis_align``): a unit axis of a frame."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from posekit.sessions.kinds.base import Params
from posekit.sessions.specs.types import (
    FrameType,
    Gain,
    LmDamping,
    MujocoName,
    NonNegativeFloat,
    Vec3,
)


class PointingParams(Params):
    """Where a unit axis of a frame points."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"frame": "wrist_cam", "frame_type": "site", "axis": [0, 0, -1], "cost": 0.5}
            ]
        }
    )

    frame: MujocoName = Field(description="Name of the body, geom or site.")
    frame_type: FrameType = Field("site", description="body | geom | site.")
    axis: Vec3 = Field([0.0, 0.0, 1.0], description="Axis in the frame (normalised).")
    cost: NonNegativeFloat = Field(1.0, description="Unitless error's cost.")
    gain: Gain = 1.0
    lm_damping: LmDamping = 0.0
