r"""Closed-form SO(3)/SE(3) helpers shared by the Lie groups and the hot IK path.

Tangent vectors of SE(3) are ordered :math:`\xi = (\rho, \theta)`: linear part
:math:`\rho` [m] first, angular part :math:`\theta` [rad] second. :math:`[x]_\times`
is the skew-symmetric matrix with :math:`[x]_\times y = x \times y`.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np
from numba import njit

from posekit.ik.exceptions import InvalidShape

_SMALL_ANGLE = 1e-3

_EPSILON = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-10}


def get_epsilon(dtype: np.dtype) -> float:
    """Threshold below which a squared angle counts as zero, per floating-point type.

    ``1e-5`` for ``float32`` and ``1e-10`` for ``float64``; any other type is a ``KeyError``.
    """
    return _EPSILON[np.dtype(dtype)]


def skew(x: np.ndarray) -> np.ndarray:
    r"""The skew-symmetric matrix :math:`[x]_\times` of a 3-vector, shape ``(3, 3)``.

    Raises :class:`InvalidShape` (also an ``AssertionError``) unless ``x`` has shape ``(3,)``.
    """
    shape = np.shape(x)
    if shape != (3,):
        raise InvalidShape(f"skew expects a vector of shape (3,), got shape {shape}")
    x0, x1, x2 = float(x[0]), float(x[1]), float(x[2])
    return np.array([[0.0, -x2, x1], [x2, 0.0, -x0], [-x1, x0, 0.0]])


def quat_log(wxyz: np.ndarray) -> np.ndarray:
    r"""Rotation vector :math:`\theta \in \mathbb{R}^3`, :math:`\|\theta\| \le \pi`, of a unit quaternion.

    With :math:`q = (w, u)`, :math:`\theta = 2\,\mathrm{atan2}(\|u\|, |w|)\,\mathrm{sign}(w)\,u / \|u\|`;
    the sign makes :math:`q` and :math:`-q` give the same (shortest) rotation vector.
    """
    w = float(wxyz[0])
    x, y, z = float(wxyz[1]), float(wxyz[2]), float(wxyz[3])
    norm_u = math.sqrt(x * x + y * y + z * z)
    if norm_u < 1e-12:
        scale = 2.0 / w if w != 0.0 else 0.0
    else:
        scale = 2.0 * math.atan2(norm_u, abs(w)) / norm_u
        if w < 0.0:
            scale = -scale
    return np.array([scale * x, scale * y, scale * z])


def quat_exp(theta: np.ndarray) -> np.ndarray:
    r"""Unit quaternion ``wxyz`` of the rotation vector :math:`\theta` (rotation by :math:`\|\theta\|` about :math:`\theta/\|\theta\|`)."""
    t0, t1, t2 = float(theta[0]), float(theta[1]), float(theta[2])
    angle_sq = t0 * t0 + t1 * t1 + t2 * t2
    if angle_sq < _SMALL_ANGLE**2:
        real = 1.0 - angle_sq / 8.0
        imag = 0.5 - angle_sq / 48.0
    else:
        angle = math.sqrt(angle_sq)
        real = math.cos(0.5 * angle)
        imag = math.sin(0.5 * angle) / angle
    return np.array([real, imag * t0, imag * t1, imag * t2])


def so3_jacobian_coefficients(angle: float) -> tuple[float, float]:
    r"""Coefficients :math:`a = (1-\cos\phi)/\phi^2`, :math:`b = (\phi - \sin\phi)/\phi^3`.

    They define :math:`J_l(\theta) = I + a[\theta]_\times + b[\theta]_\times^2` and
    :math:`J_r(\theta) = I - a[\theta]_\times + b[\theta]_\times^2` with :math:`\phi = \|\theta\|`.
    """
    if angle < _SMALL_ANGLE:
        angle_sq = angle * angle
        return 0.5 - angle_sq / 24.0, 1.0 / 6.0 - angle_sq / 120.0
    return (1.0 - math.cos(angle)) / angle**2, (angle - math.sin(angle)) / angle**3


def so3_inverse_jacobian_coefficient(angle: float) -> float:
    r"""Coefficient :math:`c = 1/\phi^2 - (1+\cos\phi)/(2\phi\sin\phi)`.

    It defines :math:`J_l^{-1}(\theta) = I - \tfrac12[\theta]_\times + c[\theta]_\times^2`
    and :math:`J_r^{-1}(\theta) = I + \tfrac12[\theta]_\times + c[\theta]_\times^2`.
    """
    if angle < _SMALL_ANGLE:
        return 1.0 / 12.0 + angle * angle / 720.0
    return 1.0 / angle**2 - (1.0 + math.cos(angle)) / (2.0 * angle * math.sin(angle))


def so3_left_jacobian(theta: np.ndarray) -> np.ndarray:
    r"""Left Jacobian :math:`J_l(\theta)` of SO(3), shape ``(3, 3)``."""
    a, b = so3_jacobian_coefficients(float(np.linalg.norm(theta)))
    hat = skew(theta)
    return np.eye(3) + a * hat + b * (hat @ hat)


def so3_left_jacobian_inverse(theta: np.ndarray) -> np.ndarray:
    r"""Inverse left Jacobian :math:`J_l^{-1}(\theta)` of SO(3), shape ``(3, 3)``."""
    c = so3_inverse_jacobian_coefficient(float(np.linalg.norm(theta)))
    hat = skew(theta)
    return np.eye(3) - 0.5 * hat + c * (hat @ hat)


def se3_q_matrix(rho: np.ndarray, theta: np.ndarray) -> np.ndarray:
    r"""The coupling block :math:`Q(\rho, \theta)` of the SE(3) left Jacobian.

    .. math::

        Q = \tfrac12 P + b\,(T P + P T + T P T)
            + c\,(T^2 P + P T^2 - 3\,T P T) + d\,(T P T^2 + T^2 P T),

    with :math:`P = [\rho]_\times`, :math:`T = [\theta]_\times`, :math:`\phi = \|\theta\|`,
    :math:`b = (\phi - \sin\phi)/\phi^3`, :math:`c = (\phi^2 + 2\cos\phi - 2)/(2\phi^4)`,
    :math:`d = (2\phi - 3\sin\phi + \phi\cos\phi)/(2\phi^5)`.
    """
    angle = float(np.linalg.norm(theta))
    if angle < 1e-2:
        angle_sq = angle * angle
        b = 1.0 / 6.0 - angle_sq / 120.0
        c = 1.0 / 24.0 - angle_sq / 720.0
        d = 1.0 / 120.0 - angle_sq / 2520.0
    else:
        sin, cos = math.sin(angle), math.cos(angle)
        b = (angle - sin) / angle**3
        c = (angle * angle + 2.0 * cos - 2.0) / (2.0 * angle**4)
        d = (2.0 * angle - 3.0 * sin + angle * cos) / (2.0 * angle**5)
    p = skew(rho)
    t = skew(theta)
    tp = t @ p
    pt = p @ t
    tpt = tp @ t
    return (
        0.5 * p + b * (tp + pt + tpt) + c * (t @ tp + pt @ t - 3.0 * tpt) + d * (tpt @ t + t @ tpt)
    )


def se3_left_jacobian(tangent: np.ndarray) -> np.ndarray:
    r"""Left Jacobian of SE(3), :math:`\begin{bmatrix} J_l(\theta) & Q(\rho,\theta) \\ 0 & J_l(\theta)\end{bmatrix}`."""
    rho, theta = tangent[:3], tangent[3:]
    jacobian = np.zeros((6, 6))
    jl = so3_left_jacobian(theta)
    jacobian[:3, :3] = jl
    jacobian[3:, 3:] = jl
    jacobian[:3, 3:] = se3_q_matrix(rho, theta)
    return jacobian


def se3_left_jacobian_inverse(tangent: np.ndarray) -> np.ndarray:
    r"""Inverse left Jacobian of SE(3): :math:`\begin{bmatrix} J_l^{-1} & -J_l^{-1} Q J_l^{-1} \\ 0 & J_l^{-1}\end{bmatrix}`."""
    rho, theta = tangent[:3], tangent[3:]
    jacobian = np.zeros((6, 6))
    jl_inv = so3_left_jacobian_inverse(theta)
    jacobian[:3, :3] = jl_inv
    jacobian[3:, 3:] = jl_inv
    jacobian[:3, 3:] = -jl_inv @ se3_q_matrix(rho, theta) @ jl_inv
    return jacobian


def se3_log(wxyz_xyz: np.ndarray) -> np.ndarray:
    r"""Logarithm :math:`\xi = (\rho, \theta)` of an SE(3) pose, with :math:`\rho = V(\theta)^{-1} t`.

    :math:`V^{-1}(\theta) = J_l^{-1}(\theta)` is the inverse left Jacobian of SO(3).
    """
    theta = quat_log(wxyz_xyz[:4])
    tangent = np.empty(6)
    tangent[3:] = theta
    tangent[:3] = so3_left_jacobian_inverse(theta) @ wxyz_xyz[4:]
    return tangent


@njit(cache=True)
def se3_log_jlog_floats(
    w: float, x: float, y: float, z: float, tx: float, ty: float, tz: float
) -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]:
    r"""Scalar core of :func:`se3_log_and_jlog` for the pose ``(w, x, y, z, tx, ty, tz)``.

    Returns the tangent :math:`(\rho, \theta)`, the block :math:`M` of :math:`J_{\log}`
    and :math:`P = M Q(-\rho, -\theta)`, whose product :math:`-P M` is the top-right
    block; each 3×3 matrix as 9 floats in row-major order.
    """
    nu2 = x * x + y * y + z * z
    nu = math.sqrt(nu2)
    if nu < 1e-12:
        k = 2.0 / w
    else:
        k = 2.0 * math.atan2(nu, abs(w)) / nu
        if w < 0.0:
            k = -k
    ax, ay, az = k * x, k * y, k * z
    phi2 = ax * ax + ay * ay + az * az
    phi = math.sqrt(phi2)
    if phi < 1e-3:
        ci = 1.0 / 12.0 + phi2 / 720.0
        b = 1.0 / 6.0 - phi2 / 120.0
        c = 1.0 / 24.0 - phi2 / 720.0
        d = 1.0 / 120.0 - phi2 / 2520.0
    else:
        sn, cs = math.sin(phi), math.cos(phi)
        ci = 1.0 / phi2 - (1.0 + cs) / (2.0 * phi * sn)
        b = (phi - sn) / (phi2 * phi)
        c = (phi2 + 2.0 * cs - 2.0) / (2.0 * phi2 * phi2)
        d = (2.0 * phi - 3.0 * sn + phi * cs) / (2.0 * phi2 * phi2 * phi)
    # rho = Jl^-1 t = t - 1/2 a x t + ci (a (a.t) - phi2 t)
    at = ax * tx + ay * ty + az * tz
    cx, cy, cz = ay * tz - az * ty, az * tx - ax * tz, ax * ty - ay * tx
    rx = tx - 0.5 * cx + ci * (ax * at - phi2 * tx)
    ry = ty - 0.5 * cy + ci * (ay * at - phi2 * ty)
    rz = tz - 0.5 * cz + ci * (az * at - phi2 * tz)
    # Jr^-1 = I + 1/2 T + ci T^2, T^2 = a a^T - phi2 I
    d0 = 1.0 - ci * phi2
    m00 = d0 + ci * ax * ax
    m11 = d0 + ci * ay * ay
    m22 = d0 + ci * az * az
    m01 = ci * ax * ay - 0.5 * az
    m10 = ci * ax * ay + 0.5 * az
    m02 = ci * ax * az + 0.5 * ay
    m20 = ci * ax * az - 0.5 * ay
    m12 = ci * ay * az - 0.5 * ax
    m21 = ci * ay * az + 0.5 * ax
    # Q(-rho, -a): with s = a.rho, u = a x rho
    s = ax * rx + ay * ry + az * rz
    ux, uy, uz = ay * rz - az * ry, az * rx - ax * rz, ax * ry - ay * rx
    # Q = -1/2 [rho]x + b(rho a^T + a rho^T - 2 s I + s [a]x)
    #     + c(-a u^T + u a^T + 2 phi2 [rho]x - 3 s [a]x) - 2 d s (a a^T - phi2 I)
    h = c * 2.0 * phi2 - 0.5  # coefficient of [rho]x
    g = b * s - 3.0 * c * s  # coefficient of [a]x
    e = -2.0 * b * s + 2.0 * d * s * phi2  # coefficient of I
    f = -2.0 * d * s  # coefficient of a a^T
    q00 = 2.0 * b * rx * ax + f * ax * ax + e
    q11 = 2.0 * b * ry * ay + f * ay * ay + e
    q22 = 2.0 * b * rz * az + f * az * az + e
    q01 = b * (rx * ay + ax * ry) + c * (-ax * uy + ux * ay) + f * ax * ay - h * rz - g * az
    q10 = b * (ry * ax + ay * rx) + c * (-ay * ux + uy * ax) + f * ay * ax + h * rz + g * az
    q02 = b * (rx * az + ax * rz) + c * (-ax * uz + ux * az) + f * ax * az + h * ry + g * ay
    q20 = b * (rz * ax + az * rx) + c * (-az * ux + uz * ax) + f * az * ax - h * ry - g * ay
    q12 = b * (ry * az + ay * rz) + c * (-ay * uz + uy * az) + f * ay * az - h * rx - g * ax
    q21 = b * (rz * ay + az * ry) + c * (-az * uy + uz * ay) + f * az * ay + h * rx + g * ax
    # P = M Q
    p00 = m00 * q00 + m01 * q10 + m02 * q20
    p01 = m00 * q01 + m01 * q11 + m02 * q21
    p02 = m00 * q02 + m01 * q12 + m02 * q22
    p10 = m10 * q00 + m11 * q10 + m12 * q20
    p11 = m10 * q01 + m11 * q11 + m12 * q21
    p12 = m10 * q02 + m11 * q12 + m12 * q22
    p20 = m20 * q00 + m21 * q10 + m22 * q20
    p21 = m20 * q01 + m21 * q11 + m22 * q21
    p22 = m20 * q02 + m21 * q12 + m22 * q22
    return (
        (rx, ry, rz, ax, ay, az),
        (m00, m01, m02, m10, m11, m12, m20, m21, m22),
        (p00, p01, p02, p10, p11, p12, p20, p21, p22),
    )


def se3_log_and_jlog(wxyz_xyz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""The logarithm :math:`\xi = (\rho, \theta) = \log(T)` and :math:`J_{\log}(T) = J_r^{-1}(\xi)`.

    With :math:`T = [\theta]_\times`, :math:`\phi = \|\theta\|` and the coefficients of
    :func:`so3_inverse_jacobian_coefficient` (:math:`c_i`) and :func:`se3_q_matrix`
    (:math:`b, c, d`):

    .. math::

        \rho = J_l^{-1}(\theta)\, t, \qquad
        J_r^{-1}(\xi) = \begin{bmatrix} M & -M Q(-\rho, -\theta) M \\ 0 & M \end{bmatrix},
        \quad M = J_r^{-1}(\theta) = I + \tfrac12 T + c_i T^2.

    :math:`Q(-\rho, -\theta)` is expanded with :math:`[a]_\times [b]_\times = b a^T - (a \cdot b) I`
    into outer products, and everything is evaluated on Python floats: this is the hot
    path of the frame tasks, where a dozen small NumPy calls would cost several times
    more than the arithmetic.
    """
    tangent, m, p = se3_log_jlog_floats(*wxyz_xyz.tolist())
    n = [-value for value in mat3_mul(p, m)]
    jlog = np.array(
        [
            [m[0], m[1], m[2], n[0], n[1], n[2]],
            [m[3], m[4], m[5], n[3], n[4], n[5]],
            [m[6], m[7], m[8], n[6], n[7], n[8]],
            [0.0, 0.0, 0.0, m[0], m[1], m[2]],
            [0.0, 0.0, 0.0, m[3], m[4], m[5]],
            [0.0, 0.0, 0.0, m[6], m[7], m[8]],
        ]
    )
    return np.array(tangent), jlog


@njit(cache=True)
def mat3_mul(a: tuple[float, ...], b: tuple[float, ...]) -> tuple[float, ...]:
    """:math:`A B` for two 3×3 matrices given as 9 row-major floats."""
    a00, a01, a02, a10, a11, a12, a20, a21, a22 = a
    b00, b01, b02, b10, b11, b12, b20, b21, b22 = b
    return (
        a00 * b00 + a01 * b10 + a02 * b20,
        a00 * b01 + a01 * b11 + a02 * b21,
        a00 * b02 + a01 * b12 + a02 * b22,
        a10 * b00 + a11 * b10 + a12 * b20,
        a10 * b01 + a11 * b11 + a12 * b21,
        a10 * b02 + a11 * b12 + a12 * b22,
        a20 * b00 + a21 * b10 + a22 * b20,
        a20 * b01 + a21 * b11 + a22 * b21,
        a20 * b02 + a21 * b12 + a22 * b22,
    )


@njit(cache=True)
def mat3_mul_transposed(a: tuple[float, ...], b: tuple[float, ...]) -> tuple[float, ...]:
    """:math:`A B^T` for two 3×3 matrices given as 9 row-major floats."""
    a00, a01, a02, a10, a11, a12, a20, a21, a22 = a
    b00, b01, b02, b10, b11, b12, b20, b21, b22 = b
    return (
        a00 * b00 + a01 * b01 + a02 * b02,
        a00 * b10 + a01 * b11 + a02 * b12,
        a00 * b20 + a01 * b21 + a02 * b22,
        a10 * b00 + a11 * b01 + a12 * b02,
        a10 * b10 + a11 * b11 + a12 * b12,
        a10 * b20 + a11 * b21 + a12 * b22,
        a20 * b00 + a21 * b01 + a22 * b02,
        a20 * b10 + a21 * b11 + a22 * b12,
        a20 * b20 + a21 * b21 + a22 * b22,
    )


def rotate_floats(w: float, x: float, y: float, z: float, vx: float, vy: float, vz: float) -> tuple:
    """``v`` rotated by the unit quaternion ``(w, x, y, z)``: :math:`v + 2w(u \times v) + 2u \times (u \times v)`."""
    tx = 2.0 * (y * vz - z * vy)
    ty = 2.0 * (z * vx - x * vz)
    tz = 2.0 * (x * vy - y * vx)
    return (
        vx + w * tx + (y * tz - z * ty),
        vy + w * ty + (z * tx - x * tz),
        vz + w * tz + (x * ty - y * tx),
    )


def multiply_quat_floats(left: tuple, right: tuple) -> tuple:
    """Hamilton product of two quaternions given as float tuples."""
    w1, x1, y1, z1 = left
    w2, x2, y2, z2 = right
    return (
        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
    )


# The quaternion and pose helpers below work on Python floats: for 4- and 7-vectors a
# handful of float operations is several times cheaper than NumPy or MuJoCo calls.
def invert_pose(pose: np.ndarray) -> np.ndarray:
    r"""``wxyz_xyz`` of :math:`T^{-1} = (R^T,\; -R^T t)`."""
    w, x, y, z, tx, ty, tz = pose.tolist()
    rx, ry, rz = rotate_floats(w, -x, -y, -z, tx, ty, tz)
    return np.array([w, -x, -y, -z, -rx, -ry, -rz])


def quat_multiply(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Hamilton product of two ``wxyz`` quaternions."""
    return np.array(multiply_quat_floats(left.tolist(), right.tolist()))


def quat_rotate(wxyz: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``vector`` rotated by the unit quaternion ``wxyz``."""
    return np.array(rotate_floats(*wxyz.tolist(), *np.asarray(vector, dtype=np.float64).tolist()))


def quat_to_matrix(wxyz: np.ndarray) -> np.ndarray:
    """Rotation matrix of a unit quaternion, shape ``(3, 3)``."""
    out = np.empty(9)
    mujoco.mju_quat2Mat(out, wxyz)
    return out.reshape(3, 3)
