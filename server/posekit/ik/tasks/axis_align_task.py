r"""Axis-align task: align a frame's axis with a direction in the world."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from posekit.ik.exceptions import TargetNotSet
from posekit.ik.lie.utils import skew
from posekit.ik.tasks.pointing import PointingTask
from posekit.ik.tasks.validation import unit_vector

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration


class AxisAlignTask(PointingTask):
    r"""Align the unit axis :math:`a` of a frame (rotation :math:`R`) with a unit direction :math:`t`.

    .. math:: e(q) = a - R^T t, \qquad J(q) = -[R^T t]_\times\, J_\omega,

    with :math:`J_\omega` the angular block of the frame's body Jacobian. The error is
    unitless and has rank two: roll about the axis stays free.
    """

    def __init__(
        self,
        frame_name: str | int,
        frame_type: str,
        axis: object = (0.0, 0.0, 1.0),
        cost: object = 1.0,
        gain: float = 1.0,
        lm_damping: float = 0.0,
    ) -> None:
        super().__init__(frame_name, frame_type, axis, cost, gain, lm_damping)
        self.target_dir: np.ndarray | None = None

    def set_target(self, target_dir: object) -> None:
        """Set the direction :math:`t` in the world, shape ``(3,)``; it is normalised."""
        self.target_dir = unit_vector(target_dir, "target_dir")

    def set_target_from_configuration(self, configuration: Configuration) -> None:
        """Set the target to the axis' current world direction :math:`R a`."""
        rotation, _, _ = self._frame_state(configuration)
        self.set_target(rotation @ self.axis)

    def _error_and_jacobian(self, configuration: Configuration) -> tuple[np.ndarray, np.ndarray]:
        if self.target_dir is None:
            raise TargetNotSet(type(self).__name__)
        rotation, _, frame_id = self._frame_state(configuration)
        target_in_frame = rotation.T @ self.target_dir
        angular_jacobian = configuration.frame_jacobian_by_id(frame_id, self.frame_type)[3:]
        return self.axis - target_in_frame, -skew(target_in_frame) @ angular_jacobian
