r"""Axis-align task: align a frame's axis with a direction in the world."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from posekit.ik.exceptions import TargetNotSet
from posekit.ik.lie.utils import mat3_mul_transposed
from posekit.ik.tasks.pointing import PointingTask
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
        rotation, _, _ = self._frame_pose(configuration)
        self.set_target(np.array(rotation).reshape(3, 3) @ self.axis)

    def _error_and_map(
        self, configuration: Configuration
    ) -> tuple[tuple[float, ...], list[float], np.ndarray]:
        if self.target_dir is None:
            raise TargetNotSet(type(self).__name__)
        rotation, _, world_jacobian = self._frame_pose(configuration)
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = rotation
        tx, ty, tz = self.target_dir.tolist()
        ux = r00 * tx + r10 * ty + r20 * tz
        uy = r01 * tx + r11 * ty + r21 * tz
        uz = r02 * tx + r12 * ty + r22 * tz
        skew_u = (0.0, -uz, uy, uz, 0.0, -ux, -uy, ux, 0.0)
        s00, s01, s02, s10, s11, s12, s20, s21, s22 = mat3_mul_transposed(skew_u, rotation)
        ax, ay, az = self.axis.tolist()
        jacobian_map = [
            0.0, 0.0, 0.0, -s00, -s01, -s02,
            0.0, 0.0, 0.0, -s10, -s11, -s12,
            0.0, 0.0, 0.0, -s20, -s21, -s22,
        ]  # fmt: skip
        return (ax - ux, ay - uy, az - uz), jacobian_map, world_jacobian
