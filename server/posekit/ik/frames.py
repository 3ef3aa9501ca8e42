"""Frame types and name/id resolution shared by the configuration, tasks and limits."""

from __future__ import annotations

import mujoco

from posekit.ik.constants import (
    FRAME_TO_COUNT_ATTR,
    FRAME_TO_ENUM,
    FRAME_TO_JAC_FUNC,
    FRAME_TO_POS_ATTR,
    FRAME_TO_XMAT_ATTR,
    SUPPORTED_FRAMES,
)
from posekit.ik.exceptions import InvalidFrame, UnsupportedFrame

__all__ = [
    "FRAME_TO_ENUM",
    "FRAME_TO_JAC_FUNC",
    "FRAME_TO_POS_ATTR",
    "FRAME_TO_XMAT_ATTR",
    "SUPPORTED_FRAMES",
    "check_frame_type",
    "frame_count",
    "resolve_frame_id",
]


def frame_count(model: mujoco.MjModel, frame_type: str) -> int:
    """Number of frames of a type in the model."""
    return int(getattr(model, FRAME_TO_COUNT_ATTR[frame_type]))


def check_frame_type(frame_type: str) -> None:
    """Raise :class:`UnsupportedFrame` unless ``frame_type`` is body, geom or site."""
    if frame_type not in FRAME_TO_ENUM:
        raise UnsupportedFrame(frame_type, SUPPORTED_FRAMES)


def resolve_frame_id(model: mujoco.MjModel, frame_name: str | int, frame_type: str) -> int:
    """Id of a frame given by name or id; raises if the type or frame is unknown."""
    check_frame_type(frame_type)
    if isinstance(frame_name, str):
        frame_id = mujoco.mj_name2id(model, FRAME_TO_ENUM[frame_type], frame_name)
        if frame_id < 0:
            raise InvalidFrame(frame_name, frame_type, model)
        return frame_id
    if isinstance(frame_name, bool) or not isinstance(frame_name, int):
        try:
            frame_name = int(frame_name)  # numpy integers
        except (TypeError, ValueError):
            raise InvalidFrame(str(frame_name), frame_type, model) from None
    if not 0 <= frame_name < frame_count(model, frame_type):
        raise InvalidFrame(frame_name, frame_type, model)
    return frame_name
