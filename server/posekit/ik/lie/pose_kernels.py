r"""Poses ``(w, x, y, z, tx, ty, tz)`` composed, inverted and built in compiled code.

The quaternion rotation and product are :func:`~posekit.ik.lie.utils.rotate_floats`
and :func:`~posekit.ik.lie.utils.multiply_quat_floats` compiled with Numba: the same
floating-point operations whether :class:`~posekit.ik.lie.SE3` composes two poses or a
compiled IK step does.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from posekit.ik.lie.utils import multiply_quat_floats, rotate_floats

Pose = tuple[float, float, float, float, float, float, float]
_VECTOR_INTO = ["int64(float64[::1], float64[::1])", "int64(float64[:], float64[::1])"]
"""A contiguous float64 vector or any other (one dispatch, no layout check before it)."""

rotate = njit(cache=True, nogil=True)(rotate_floats)
multiply = njit(cache=True, nogil=True)(multiply_quat_floats)


@njit(cache=True, nogil=True)
def compose(left: Pose, right: Pose) -> Pose:
    r""":math:`T_1 T_2 = (R_1 R_2,\; R_1 t_2 + t_1)`."""
    w, x, y, z, ax, ay, az = left
    rx, ry, rz = rotate(w, x, y, z, right[4], right[5], right[6])
    qw, qx, qy, qz = multiply((w, x, y, z), (right[0], right[1], right[2], right[3]))
    return (qw, qx, qy, qz, rx + ax, ry + ay, rz + az)


@njit(cache=True, nogil=True)
def invert(pose: Pose) -> Pose:
    r""":math:`T^{-1} = (R^T,\; -R^T t)`."""
    w, x, y, z, tx, ty, tz = pose
    rx, ry, rz = rotate(w, -x, -y, -z, tx, ty, tz)
    return (w, -x, -y, -z, -rx, -ry, -rz)


@njit(cache=True)  # no nogil: releasing the GIL would cost more than the kernel
def compose_into(left: np.ndarray, right: np.ndarray, out: np.ndarray) -> int:
    r"""Write :math:`T_1 T_2` into ``out`` (three arrays of 7: one dispatch, no boxing)."""
    pose = compose(
        (left[0], left[1], left[2], left[3], left[4], left[5], left[6]),
        (right[0], right[1], right[2], right[3], right[4], right[5], right[6]),
    )
    for i in range(7):
        out[i] = pose[i]
    return 0


@njit(_VECTOR_INTO, cache=True)  # eager: any other argument is a TypeError, not a compile
def translation_into(translation: np.ndarray, out: np.ndarray) -> int:
    r"""Write the pure translation :math:`(1, 0, 0, 0, t)` into ``out`` (7); 0 when
    ``translation`` has 3 entries [m], 1 (nothing written) otherwise."""
    if translation.shape[0] != 3:
        return 1
    out[0], out[1], out[2], out[3] = 1.0, 0.0, 0.0, 0.0
    out[4], out[5], out[6] = translation[0], translation[1], translation[2]
    return 0
