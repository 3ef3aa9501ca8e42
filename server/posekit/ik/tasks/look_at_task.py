r"""Look-at task: point a frame's axis at a target point in the world."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from posekit.ik.exceptions import TargetNotSet
from posekit.ik.lie.utils import mat3_mul_transposed
from posekit.ik.tasks.pointing import PointingTask
from posekit.ik.tasks.validation import target_vector

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration

_MIN_DISTANCE = 1e-9


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
        self.target_pos: np.ndarray | None = None

    def set_target(self, target_pos: object) -> None:
        """Set the point :math:`p^*` [m] to look at, in the world, shape ``(3,)``."""
        self.target_pos = target_vector(target_pos, 3, "target_pos")

    def set_target_from_configuration(self, configuration: Configuration) -> None:
        """Set the target one meter along the current axis, :math:`p + R a`."""
        rotation, position, _ = self._frame_pose(configuration)
        matrix = np.array(rotation).reshape(3, 3)
        self.set_target(np.array(position) + matrix @ self.axis)

    def _error_and_map(
        self, configuration: Configuration
    ) -> tuple[tuple[float, ...], list[float], np.ndarray]:
        if self.target_pos is None:
            raise TargetNotSet(type(self).__name__)
        rotation, position, world_jacobian = self._frame_pose(configuration)
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = rotation
        px, py, pz = self.target_pos.tolist()
        gx, gy, gz = (px - position[0], py - position[1],
                      pz - position[2])  # fmt: skip
        rx = r00 * gx + r10 * gy + r20 * gz
        ry = r01 * gx + r11 * gy + r21 * gz
        rz = r02 * gx + r12 * gy + r22 * gz
        distance = math.sqrt(rx * rx + ry * ry + rz * rz)
        if distance < _MIN_DISTANCE:
            return (0.0, 0.0, 0.0), [0.0] * 18, world_jacobian
        dx, dy, dz = rx / distance, ry / distance, rz / distance
        inv = 1.0 / distance
        p00, p01, p02 = inv * (1.0 - dx * dx), -inv * dx * dy, -inv * dx * dz
        p11, p12, p22 = inv * (1.0 - dy * dy), -inv * dy * dz, inv * (1.0 - dz * dz)
        projector = (p00, p01, p02, p01, p11, p12, p02, p12, p22)
        # P [r]x, row by row: (P_i1 rz - P_i2 ry, P_i2 rx - P_i0 rz, P_i0 ry - P_i1 rx)
        skewed = (
            p01 * rz - p02 * ry, p02 * rx - p00 * rz, p00 * ry - p01 * rx,
            p11 * rz - p12 * ry, p12 * rx - p01 * rz, p01 * ry - p11 * rx,
            p12 * rz - p22 * ry, p22 * rx - p02 * rz, p02 * ry - p12 * rx,
        )  # fmt: skip
        a00, a01, a02, a10, a11, a12, a20, a21, a22 = mat3_mul_transposed(projector, rotation)
        b00, b01, b02, b10, b11, b12, b20, b21, b22 = mat3_mul_transposed(skewed, rotation)
        ax, ay, az = self.axis.tolist()
        jacobian_map = [
            a00, a01, a02, -b00, -b01, -b02,
            a10, a11, a12, -b10, -b11, -b12,
            a20, a21, a22, -b20, -b21, -b22,
        ]  # fmt: skip
        return (ax - dx, ay - dy, az - dz), jacobian_map, world_jacobian
