r"""Look-at and axis-align errors and Jacobian maps, compiled with Numba.

Both return the error :math:`e` (3 floats) and the row-major 3×6 map :math:`L` with
:math:`J = L\,[J_p; J_r]` ([J_p; J_r] the frame's world Jacobian). With the frame
rotation :math:`R`, position :math:`p` and unit axis :math:`a`:

- look-at a point :math:`p^*`: :math:`r = R^T(p^* - p)`, :math:`n = \|r\|`,
  :math:`\hat d = r / n`, :math:`e = a - \hat d`,
  :math:`L = P\,[R^T \;\; -[r]_\times R^T]` with :math:`P = (I - \hat d \hat d^T)/n`;
- align with a unit direction :math:`t`: :math:`u = R^T t`, :math:`e = a - u`,
  :math:`L = [0 \;\; -[u]_\times R^T]`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from posekit.ik.lie.utils import mat3_mul_transposed

Floats = tuple[float, ...]
MIN_LOOK_AT_DISTANCE = 1e-9
"""Below this target distance [m] the look-at error and map are zero (no direction)."""


@njit(cache=True)
def look_at_error_and_map(
    target: np.ndarray, axis: np.ndarray, rotation: np.ndarray, position: np.ndarray
) -> tuple[Floats, Floats]:
    """Look-at error and 3×6 map for the point ``target`` [m] (module docstring)."""
    r = (rotation[0], rotation[1], rotation[2], rotation[3], rotation[4],
         rotation[5], rotation[6], rotation[7], rotation[8])  # fmt: skip
    gx = target[0] - position[0]
    gy = target[1] - position[1]
    gz = target[2] - position[2]
    rx = r[0] * gx + r[3] * gy + r[6] * gz
    ry = r[1] * gx + r[4] * gy + r[7] * gz
    rz = r[2] * gx + r[5] * gy + r[8] * gz
    distance = math.sqrt(rx * rx + ry * ry + rz * rz)
    if distance < MIN_LOOK_AT_DISTANCE:
        return (0.0, 0.0, 0.0), (0.0,) * 18
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
    a00, a01, a02, a10, a11, a12, a20, a21, a22 = mat3_mul_transposed(projector, r)
    b00, b01, b02, b10, b11, b12, b20, b21, b22 = mat3_mul_transposed(skewed, r)
    error = (axis[0] - dx, axis[1] - dy, axis[2] - dz)
    jacobian_map = (
        a00, a01, a02, -b00, -b01, -b02,
        a10, a11, a12, -b10, -b11, -b12,
        a20, a21, a22, -b20, -b21, -b22,
    )  # fmt: skip
    return error, jacobian_map


@njit(cache=True)
def axis_align_error_and_map(
    target: np.ndarray, axis: np.ndarray, rotation: np.ndarray, position: np.ndarray
) -> tuple[Floats, Floats]:
    """Axis-align error and 3×6 map for the unit direction ``target`` (module docstring)."""
    r = (rotation[0], rotation[1], rotation[2], rotation[3], rotation[4],
         rotation[5], rotation[6], rotation[7], rotation[8])  # fmt: skip
    tx, ty, tz = target[0], target[1], target[2]
    ux = r[0] * tx + r[3] * ty + r[6] * tz
    uy = r[1] * tx + r[4] * ty + r[7] * tz
    uz = r[2] * tx + r[5] * ty + r[8] * tz
    skew_u = (0.0, -uz, uy, uz, 0.0, -ux, -uy, ux, 0.0)
    s00, s01, s02, s10, s11, s12, s20, s21, s22 = mat3_mul_transposed(skew_u, r)
    error = (axis[0] - ux, axis[1] - uy, axis[2] - uz)
    jacobian_map = (
        0.0, 0.0, 0.0, -s00, -s01, -s02,
        0.0, 0.0, 0.0, -s10, -s11, -s12,
        0.0, 0.0, 0.0, -s20, -s21, -s22,
    )  # fmt: skip
    return error, jacobian_map
