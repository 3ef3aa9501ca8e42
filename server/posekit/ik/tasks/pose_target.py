r"""Validating and storing a pose target in one compiled pass.

A pose target :math:`T = (q, t)` (``wxyz_xyz``) is stored, when finite and with a
non-zero quaternion, in a task's buffer of 19 floats: the unit quaternion
:math:`q / \|q\|` and :math:`t` [m] (7), the rotation matrix :math:`R(q)` row-major (9)
and :math:`t` again (3), the layout the frame kernels read. Nothing is written when the
target is refused, so a bad target leaves the previous one in place.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from posekit.ik.exceptions import InvalidTarget
from posekit.ik.lie import SE3
from posekit.ik.tasks.frame_residual import rotation_from_quat

POSE_BUFFER = 19
"""Floats of a pose-target buffer: ``wxyz_xyz`` (7), rotation (9), translation (3)."""
_OK, _NOT_FINITE, _ZERO_QUATERNION = 0, 1, 2
_SIGNATURES = ["int64(float64[::1], float64[::1])", "int64(float64[:], float64[::1])"]
"""A contiguous pose and any other float64 vector (no layout check before the call)."""


@njit(_SIGNATURES, cache=True)  # no nogil: releasing the GIL would cost more than the kernel
def _store(pose: np.ndarray, out: np.ndarray) -> int:
    """Write the normalised pose, its rotation and translation into ``out``; 0 when valid."""
    for value in pose:
        if not math.isfinite(value):
            return _NOT_FINITE
    w, x, y, z = pose[0], pose[1], pose[2], pose[3]
    norm = math.sqrt(w * w + x * x + y * y + z * z)
    if norm < 1e-9:
        return _ZERO_QUATERNION
    w, x, y, z = w / norm, x / norm, y / norm, z / norm
    out[0], out[1], out[2], out[3] = w, x, y, z
    rotation = rotation_from_quat(w, x, y, z)
    for i in range(9):
        out[7 + i] = rotation[i]
    for i in range(3):
        out[4 + i] = pose[4 + i]
        out[16 + i] = pose[4 + i]
    return _OK


def store_pose_target(target: object, what: str, buffer: np.ndarray) -> None:
    """Validate ``target`` and store it in ``buffer`` (module docstring).

    Raises:
        InvalidTarget: ``target`` is not an :class:`SE3`, is not finite or has a zero
            quaternion; ``buffer`` is then unchanged.
    """
    if not isinstance(target, SE3):
        raise InvalidTarget(f"{what} must be an SE3, got {type(target).__name__}")
    pose = target.wxyz_xyz
    try:
        code = _store(pose, buffer)
    except TypeError:  # not a float64 vector: store its float64 copy
        pose = np.ascontiguousarray(pose, dtype=np.float64)
        code = _store(pose, buffer)
    if code == _NOT_FINITE:
        raise InvalidTarget(f"{what} must be finite, got {pose.tolist()}")
    if code == _ZERO_QUATERNION:
        raise InvalidTarget(f"{what} has a zero quaternion, got {pose.tolist()}")


def stored_pose(buffer: np.ndarray) -> SE3:
    """The stored target as a new :class:`SE3`."""
    return SE3(buffer[:7].copy())
