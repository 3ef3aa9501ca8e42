"""Lazy, cached resolution of a task's frame name to an id in a given model."""

from __future__ import annotations

import mujoco

from posekit.ik.frames import check_frame_type, resolve_frame_id


class FrameRef:
    """A frame named by name or id, resolved once per model it is used with.

    Tasks are constructed without a model (as upstream), so the id is resolved on
    first use and cached for that model; a different model resolves again.
    """

    __slots__ = ("_frame_id", "_model", "frame_name", "frame_type")

    def __init__(self, frame_name: str | int, frame_type: str) -> None:
        check_frame_type(frame_type)
        self.frame_name = frame_name
        self.frame_type = frame_type
        self._model: mujoco.MjModel | None = None
        self._frame_id = -1

    def id_in(self, model: mujoco.MjModel) -> int:
        """The frame's id in ``model`` (raises ``InvalidFrame`` when absent)."""
        if model is not self._model:
            self._frame_id = resolve_frame_id(model, self.frame_name, self.frame_type)
            self._model = model
        return self._frame_id
