r"""Axis-align task: align a frame's axis with a direction in the world."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from posekit.ik.tasks.kernels import axis_align_kernel
from posekit.ik.tasks.pointing import PointingTask
from posekit.ik.tasks.pointing_residual import axis_align_error_and_map
from posekit.ik.tasks.validation import unit_vector

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration


class AxisAlignTask(PointingTask):
    r"""Align the unit axis :math:`a` of a frame (rotation :math:`R`) with a unit direction :math:`t`.

    .. math:: e(q) = a - R^T t, \qquad J(q) = -[R^T t]_\times\, J_\omega,

    with :math:`J_\omega = R^T J_r` the angular block of the frame's body Jacobian, so
    the map applied to the world Jacobian is :math:`L = [0 \;\; -[u]_\times R^T]`,
    :math:`u = R^T t`. The error is unitless and has rank two: roll about the axis
    stays free.
    """

    error_and_map = staticmethod(axis_align_error_and_map)
    kernel = staticmethod(axis_align_kernel)

    @property
    def target_dir(self) -> np.ndarray | None:
        """Unit target direction in the world (None until set)."""
        return self._stored_target()

    @target_dir.setter
    def target_dir(self, target_dir: object) -> None:
        self.set_target(target_dir)

    def set_target(self, target_dir: object) -> None:
        """Set the direction :math:`t` in the world, shape ``(3,)``; it is normalised."""
        self._store_target(
            unit_vector(
                target_dir,
                f"{type(self).__name__} target direction",
                "Expected target direction to have shape (3,) but got {shape}",
            )
        )

    def set_target_from_configuration(self, configuration: Configuration) -> None:
        """Set the target to the axis' current world direction :math:`R a`."""
        rotation, _ = self._frame_pose_arrays(configuration)
        self.set_target(rotation.reshape(3, 3) @ self.axis)
