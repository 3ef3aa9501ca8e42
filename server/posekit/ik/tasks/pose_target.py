r"""Validating and storing a pose target in one compiled pass.

A pose target :math:`T = (q, t)` (``wxyz_xyz``) is stored, when finite and with a
non-zero quaternion, in a task's buffer of 19 floats: the unit quaternion
:math:`q / \|q\|` and :math:`t` [m] (7), the rotation matrix :math:`R(q)` row-major (9)
and :math:`t` again (3), the layout the frame kernels read. Nothing is written when the
target is refused, so a bad target leaves the previous one in place.

A pose given as numbers (:class:`PoseValues`, the hot path of a moved target) is
packed into a small staging vector first and stored by the same compiled pass: the
same checks and the very same floats as storing ``SE3(np.array([*wxyz, *xyz]))``,
without building the array and the transform.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from typing import Any

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
    """Write the normalised pose, its rotation and translation into ``out``; 0 when valid
    (nothing written otherwise). A ``TypeError`` for anything but a float64 vector."""
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


_PACK_POSE = struct.Struct("7d").pack_into  # wxyz_xyz, as float64 (native order)


class PoseValues:
    """A staging vector for poses given as numbers: a ``bytearray`` of 7 doubles (packed
    with :mod:`struct`, cheaper than building an array) and the float64 array over it
    (what the compiled pass reads). Each pickled or copied task gets its own."""

    __slots__ = ("_array", "_raw")

    def __init__(self) -> None:
        self._raw = bytearray(7 * 8)
        self._array = np.frombuffer(self._raw, dtype=np.float64)

    def __reduce__(self) -> tuple[Any, ...]:
        return PoseValues, ()  # a fresh one: the staged values are not state

    def store(
        self, wxyz: Sequence[float], xyz: Sequence[float], what: str, buffer: np.ndarray
    ) -> None:
        """:func:`store_pose_target` of ``SE3(np.array([*wxyz, *xyz]))`` (``wxyz`` a
        quaternion (w, x, y, z), ``xyz`` a translation [m]): the same floats stored and
        the same errors (values that are not 4 and 3 numbers take that very road)."""
        try:
            _PACK_POSE(self._raw, 0, *wxyz, *xyz)
        except (struct.error, TypeError, OverflowError):  # not 7 numbers: as SE3 does
            store_pose_target(SE3(np.array([*wxyz, *xyz])), what, buffer)
            return
        code = _store(self._array, buffer)
        if code == _NOT_FINITE:
            raise InvalidTarget(f"{what} must be finite, got {self._array.tolist()}")
        if code == _ZERO_QUATERNION:
            raise InvalidTarget(f"{what} has a zero quaternion, got {self._array.tolist()}")


def stored_pose(buffer: np.ndarray) -> SE3:
    """The stored target as a new :class:`SE3`."""
    return SE3(buffer[:7].copy())
