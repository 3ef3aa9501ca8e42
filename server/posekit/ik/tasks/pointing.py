r"""Shared base of the tasks that point a frame's axis: look-at and axis-align.

Both have a unit axis :math:`a` in the frame, a 3D error of rank two and a single
scalar cost that weights every coordinate of the error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from posekit.ik.exceptions import TaskDefinitionError
from posekit.ik.tasks.frame_resolution import FrameRef
from posekit.ik.tasks.task import Objective, Residual, Task, objective_from_residual
from posekit.ik.tasks.validation import cost_vector, unit_vector

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration


class PointingTask(Task):
    """A task on where a frame's unit axis points; subclasses define error and Jacobian."""

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
        super().__init__(cost=np.zeros(self.k), gain=gain, lm_damping=lm_damping)
        self._frame = FrameRef(frame_name, frame_type)
        self.frame_name = frame_name
        self.frame_type = frame_type
        self.axis = np.array([0.0, 0.0, 1.0])
        self.set_axis(axis)
        self.set_cost(cost)

    def set_axis(self, axis: object) -> None:
        """Set the axis :math:`a` in the frame's coordinates, normalised to unit length."""
        self.axis = unit_vector(axis, "axis", error=TaskDefinitionError)

    def set_cost(self, cost: object) -> None:
        """Set the cost: a scalar or a vector of shape (1,), applied to every coordinate."""
        self.cost = np.repeat(cost_vector(cost, 1, "cost"), self.k)

    def _frame_state(self, configuration: Configuration) -> tuple[np.ndarray, np.ndarray, int]:
        frame_id = self._frame.id_in(configuration.model)
        rotation = configuration.frame_rotation_by_id(frame_id, self.frame_type)
        position = configuration.frame_position_by_id(frame_id, self.frame_type)
        return rotation, position, frame_id

    def _error_and_jacobian(self, configuration: Configuration) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def compute_error(self, configuration: Configuration) -> np.ndarray:
        """Task error, shape ``(3,)``."""
        return self._error_and_jacobian(configuration)[0]

    def compute_jacobian(self, configuration: Configuration) -> np.ndarray:
        """Task Jacobian, shape ``(3, nv)``."""
        return self._error_and_jacobian(configuration)[1]

    def compute_qp_residual(self, configuration: Configuration) -> Residual:
        """Weighted residual, reading the frame pose and Jacobian once."""
        return self.weighted_residual(*self._error_and_jacobian(configuration))

    def compute_qp_objective(self, configuration: Configuration) -> Objective:
        """QP objective, reading the frame pose and Jacobian once."""
        return objective_from_residual(*self.compute_qp_residual(configuration))
