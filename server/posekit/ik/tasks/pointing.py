r"""Shared base of the tasks that point a frame's axis: look-at and axis-align.

Both have a unit axis :math:`a` in the frame, a 3D error of rank two and a single
scalar cost that weights every coordinate of the error.
"""

from __future__ import annotations

import numpy as np

from posekit.ik.exceptions import TargetNotSet, TaskDefinitionError
from posekit.ik.tasks.mapped_task import MappedFrameTask
from posekit.ik.tasks.validation import SCALAR_COST_SHAPE, cost_vector, unit_vector


class PointingTask(MappedFrameTask):
    """A task on where a frame's unit axis points; subclasses define error and map."""

    k: int = 3

    def __init__(
        self,
        frame_name: str | int,
        frame_type: str,
        axis: object = (0.0, 0.0, 1.0),
        cost: object = 1.0,
        gain: float = 1.0,
        lm_damping: float = 0.0,
    ) -> None:
        super().__init__(frame_name, frame_type, np.zeros(self.k), gain, lm_damping)
        self._target_vector = np.zeros(3)  # the target point or direction (subclass)
        self._has_target = False
        self.axis = np.array([0.0, 0.0, 1.0])
        self.set_axis(axis)
        self.set_cost(cost)

    def set_axis(self, axis: object) -> None:
        """Set the axis :math:`a` in the frame's coordinates, normalised to unit length."""
        name = type(self).__name__
        self.axis = unit_vector(
            axis,
            f"{name} axis",
            f"{name} axis must have shape (3,) but got {{shape}}",
            error=TaskDefinitionError,
        )

    def _store_target(self, value: np.ndarray) -> None:
        """Write a validated target into the task's buffer (in place)."""
        self._target_vector[:] = value
        if not self._has_target:
            self._has_target = True

    def _stored_target(self) -> np.ndarray | None:
        """The task's target buffer, or ``None`` until a target is set."""
        return self._target_vector if self._has_target else None

    def kernel_targets(self) -> tuple[np.ndarray, np.ndarray]:
        """The target (point or direction) and the axis; raises ``TargetNotSet`` until set."""
        if not self._has_target:
            raise TargetNotSet(type(self).__name__)
        return self._target_vector, self.axis

    def set_cost(self, cost: object) -> None:
        """Set the cost: a scalar or a vector of shape (1,), applied to every coordinate."""
        self.cost = np.repeat(
            cost_vector(cost, 1, f"{type(self).__name__} cost", SCALAR_COST_SHAPE), self.k
        )
