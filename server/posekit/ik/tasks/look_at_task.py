r"""Look-at task: point a frame's axis at a target point in the world."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from posekit.ik.tasks.kernels import look_at_kernel
from posekit.ik.tasks.pointing import PointingTask
from posekit.ik.tasks.pointing_residual import look_at_error_and_map
from posekit.ik.tasks.validation import target_vector

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration


class LookAtTask(PointingTask):
    r"""Point the unit axis :math:`a` of a frame (rotation :math:`R`, position :math:`p`) at :math:`p^*`.

    With :math:`r = R^T (p^* - p)`, :math:`n = \|r\|` and :math:`\hat d = r / n`,

    .. math::

        e(q) = a - \hat d, \qquad
        J(q) = \frac{1}{n}\,(I - \hat d \hat d^T)\,\big(J_v - [r]_\times J_\omega\big),

    with :math:`[J_v; J_\omega] = \mathrm{diag}(R^T, R^T)[J_p; J_r]` the frame's body
    Jacobian, so the map applied to the world Jacobian is
    :math:`L = P\,[R^T \;\; -[r]_\times R^T]` with :math:`P = (I - \hat d \hat d^T)/n`.
    The error is unitless and has rank two: roll about the line of sight stays free.
    When the target coincides with the frame origin the error and Jacobian are zero.
    """

    error_and_map = staticmethod(look_at_error_and_map)
    kernel = staticmethod(look_at_kernel)

    @property
    def target_pos(self) -> np.ndarray | None:
        """Target point [m] to look at, in the world (None until set)."""
        return self._stored_target()

    @target_pos.setter
    def target_pos(self, target_pos: object) -> None:
        self.set_target(target_pos)

    def set_target(self, target_pos: object) -> None:
        """Set the point :math:`p^*` [m] to look at, in the world, shape ``(3,)``."""
        self._store_target(target_vector(target_pos, 3, "target position"))

    def set_target_from_configuration(self, configuration: Configuration) -> None:
        """Set the target one meter along the current axis, :math:`p + R a`."""
        rotation, position = self._frame_pose_arrays(configuration)
        self.set_target(position + rotation.reshape(3, 3) @ self.axis)
