r"""The frame-task error and Jacobian map on Python floats (the hot path of every IK step).

For a frame :math:`b` with world pose :math:`(R_b, p_b)` and a target :math:`(R_t, p_t)`,

.. math::

    T_{tb} = T_{0t}^{-1} T_{0b} = (R_t^T R_b,\; R_t^T (p_b - p_t)), \qquad
    e = \log(T_{bt}) = -\log(T_{tb}),

and the task Jacobian is :math:`J = -J_{\log}(T_{tb})\,{}_bJ_b` with the body Jacobian
:math:`{}_bJ_b = \mathrm{diag}(R_b^T, R_b^T)\,[J_p; J_r]` of MuJoCo's world-frame
translational and rotational Jacobians. This module returns :math:`e` and the 6×6 map
:math:`L = -J_{\log}(T_{tb})\,\mathrm{diag}(R_b^T, R_b^T)`, so that :math:`J = L\,[J_p; J_r]`
costs a single matrix product. Everything here is a few hundred float operations on
scalars, compiled with Numba: in the interpreter they would dominate the IK step.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from posekit.ik.lie.utils import mat3_mul, mat3_mul_transposed, se3_log_jlog_floats

Floats = tuple[float, ...]


@njit(cache=True)
def quat_from_rotation(r: Floats) -> Floats:
    """Unit quaternion ``(w, x, y, z)`` of a row-major rotation matrix (Shepperd's method)."""
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = r
    trace = r00 + r11 + r22
    if trace > 0.0:
        s = 2.0 * math.sqrt(trace + 1.0)
        return 0.25 * s, (r21 - r12) / s, (r02 - r20) / s, (r10 - r01) / s
    if r00 >= r11 and r00 >= r22:
        s = 2.0 * math.sqrt(1.0 + r00 - r11 - r22)
        return (r21 - r12) / s, 0.25 * s, (r01 + r10) / s, (r02 + r20) / s
    if r11 >= r22:
        s = 2.0 * math.sqrt(1.0 + r11 - r00 - r22)
        return (r02 - r20) / s, (r01 + r10) / s, 0.25 * s, (r12 + r21) / s
    s = 2.0 * math.sqrt(1.0 + r22 - r00 - r11)
    return (r10 - r01) / s, (r02 + r20) / s, (r12 + r21) / s, 0.25 * s


@njit(cache=True)
def rotation_from_quat(w: float, x: float, y: float, z: float) -> Floats:
    """Row-major rotation matrix of a unit quaternion."""
    return (
        1.0 - 2.0 * (y * y + z * z),
        2.0 * (x * y - w * z),
        2.0 * (x * z + w * y),
        2.0 * (x * y + w * z),
        1.0 - 2.0 * (x * x + z * z),
        2.0 * (y * z - w * x),
        2.0 * (x * z - w * y),
        2.0 * (y * z + w * x),
        1.0 - 2.0 * (x * x + y * y),
    )


@njit(cache=True)
def frame_error_and_map(
    target_rotation: np.ndarray,
    target_position: np.ndarray,
    rotation: np.ndarray,
    position: np.ndarray,
) -> tuple[Floats, Floats]:
    r"""The error :math:`e = \log(T_{bt})` (6 floats) and the map :math:`L` (36 floats, row-major).

    Args:
        target_rotation: :math:`R_t`, shape ``(9,)``, row-major.
        target_position: :math:`p_t` [m], shape ``(3,)``.
        rotation: :math:`R_b`, shape ``(9,)``, row-major (MuJoCo's ``xmat`` layout).
        position: :math:`p_b` [m], shape ``(3,)``.
    """
    a00, a01, a02 = target_rotation[0], target_rotation[1], target_rotation[2]
    a10, a11, a12 = target_rotation[3], target_rotation[4], target_rotation[5]
    a20, a21, a22 = target_rotation[6], target_rotation[7], target_rotation[8]
    b00, b01, b02 = rotation[0], rotation[1], rotation[2]
    b10, b11, b12 = rotation[3], rotation[4], rotation[5]
    b20, b21, b22 = rotation[6], rotation[7], rotation[8]
    # R_tb = R_t^T R_b
    r00 = a00 * b00 + a10 * b10 + a20 * b20
    r01 = a00 * b01 + a10 * b11 + a20 * b21
    r02 = a00 * b02 + a10 * b12 + a20 * b22
    r10 = a01 * b00 + a11 * b10 + a21 * b20
    r11 = a01 * b01 + a11 * b11 + a21 * b21
    r12 = a01 * b02 + a11 * b12 + a21 * b22
    r20 = a02 * b00 + a12 * b10 + a22 * b20
    r21 = a02 * b01 + a12 * b11 + a22 * b21
    r22 = a02 * b02 + a12 * b12 + a22 * b22
    dx = position[0] - target_position[0]
    dy = position[1] - target_position[1]
    dz = position[2] - target_position[2]
    tx = a00 * dx + a10 * dy + a20 * dz
    ty = a01 * dx + a11 * dy + a21 * dz
    tz = a02 * dx + a12 * dy + a22 * dz
    w, x, y, z = quat_from_rotation((r00, r01, r02, r10, r11, r12, r20, r21, r22))
    tangent, m, p = se3_log_jlog_floats(w, x, y, z, tx, ty, tz)
    # -J_log diag(R_b^T, R_b^T) = [[-M R_b^T, P (M R_b^T)], [0, -M R_b^T]]
    mr = mat3_mul_transposed(m, (b00, b01, b02, b10, b11, b12, b20, b21, b22))
    mr00, mr01, mr02, mr10, mr11, mr12, mr20, mr21, mr22 = mr
    nr00, nr01, nr02, nr10, nr11, nr12, nr20, nr21, nr22 = mat3_mul(p, mr)
    rho_x, rho_y, rho_z, theta_x, theta_y, theta_z = tangent
    error = (-rho_x, -rho_y, -rho_z, -theta_x, -theta_y, -theta_z)
    jacobian_map = (
        -mr00, -mr01, -mr02, nr00, nr01, nr02,
        -mr10, -mr11, -mr12, nr10, nr11, nr12,
        -mr20, -mr21, -mr22, nr20, nr21, nr22,
        0.0, 0.0, 0.0, -mr00, -mr01, -mr02,
        0.0, 0.0, 0.0, -mr10, -mr11, -mr12,
        0.0, 0.0, 0.0, -mr20, -mr21, -mr22,
    )  # fmt: skip
    return error, jacobian_map
