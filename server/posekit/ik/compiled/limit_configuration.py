r"""Compiled configuration limit: joint ranges as simple bounds, ball joints as rows.

As :class:`~posekit.ik.limits.ConfigurationLimit` (its module docstring derives both):
for each DoF :math:`i` with its limited coordinate at ``qpos`` address :math:`a` and the
limit's own range buffers :math:`l, u` (``ConfigurationLimit.box_limits``; the entry
``nq`` is :math:`\mp\infty`, "no limit"),

.. math:: \gamma\,(l_a - q_a) \le \Delta q_i \le \gamma\,(u_a - q_a)

(none at all when no hinge or slide is limited), and for each limited ball joint at
angle :math:`\theta` about the axis :math:`n` the row
:math:`n^T \Delta\omega \le \gamma(\theta_{\max} - \theta)` (a zero row at the identity).

Record: boxed flag, the address of the DoFs' ``qpos`` addresses (``int64``; 0: the
identity), of the ``(nq + 1,)`` lower and upper buffers; the number of limited balls
and the addresses of their ``qpos``/DoF addresses (``int64``) and maximum angles.
Scalar: the gain.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from posekit.ik.compiled import header as h
from posekit.ik.compiled.native import floats, int64s
from posekit.ik.compiled.packing import NotCompiled, PackContext, Packed, all_columns, scalar
from posekit.ik.limits import ConfigurationLimit

C_BOXED = h.R_FIRST
C_QPOS_OF_DOF = h.R_FIRST + 1
C_LOWER = h.R_FIRST + 2
C_UPPER = h.R_FIRST + 3
C_NBALLS = h.R_FIRST + 4
C_BALL_ADR = h.R_FIRST + 5  # int64 pairs (qpos address, dof address)
C_BALL_MAX = h.R_FIRST + 6
_IDENTITY_ANGLE = 1e-9  # [rad], as the Python path


def pack(limit: ConfigurationLimit, context: PackContext) -> Packed:
    """The record of a configuration limit (module docstring)."""
    model = context.model
    box = limit.box_limits()
    ball_qpos, ball_dofs, ball_max = limit.ball_joints()
    balls = np.ascontiguousarray(np.stack([ball_qpos, ball_dofs], axis=1), dtype=np.int64)
    maxima = np.ascontiguousarray(ball_max, dtype=np.float64)
    packed = Packed(h.L_CONFIGURATION, [], [], len(maxima), all_columns(model.nv), [balls, maxima])
    boxed = [0, 0, 0, 0]
    if box is not None:
        qpos_of_dof, lower, upper = box
        mapping = 0
        if qpos_of_dof is not None:
            mapped = np.ascontiguousarray(qpos_of_dof, dtype=np.int64)
            packed.keep.append(mapped)
            mapping = int(mapped.ctypes.data)
        size = model.nq + 1
        boxed = [
            1,
            mapping,
            _buffer(packed, lower, size, "ConfigurationLimit.lower"),
            _buffer(packed, upper, size, "ConfigurationLimit.upper"),
        ]
    packed.ints = [*boxed, len(maxima), int(balls.ctypes.data), int(maxima.ctypes.data)]
    packed.floats = [scalar(limit.gain, "gain")]
    return packed


def _buffer(packed: Packed, array: np.ndarray, size: int, what: str) -> int:
    if not (array.dtype == np.float64 and array.shape == (size,) and array.flags.c_contiguous):
        raise NotCompiled(f"{what}'s buffer is not a float64 vector of shape ({size},)")
    packed.keep.append(array)
    return int(array.ctypes.data)


@njit(cache=True, nogil=True)
def maximum(a: float, b: float) -> float:
    """``np.maximum`` of two floats (a NaN wins)."""
    return a if (a >= b or a != a) else b


@njit(cache=True, nogil=True)
def minimum(a: float, b: float) -> float:
    """``np.minimum`` of two floats (a NaN wins)."""
    return a if (a <= b or a != a) else b


@njit(cache=True, nogil=True)
def bounds(
    ints: np.ndarray,
    scalars: np.ndarray,
    record: int,
    lower: np.ndarray,
    upper: np.ndarray,
    merge: bool,
) -> bool:
    r"""Set (or, with ``merge``, intersect) ``lower``/``upper``; False when nothing is boxed."""
    if ints[record + C_BOXED] == 0:
        return False
    nv, nq = ints[h.H_NV], ints[h.H_NQ]
    qpos = floats(ints[h.H_QPOS], nq)
    mapping = ints[record + C_QPOS_OF_DOF]
    qpos_of_dof = int64s(mapping, nv if mapping else 0)
    upper_limits = floats(ints[record + C_UPPER], nq + 1)
    lower_limits = floats(ints[record + C_LOWER], nq + 1)
    gain = scalars[ints[record + h.R_FLOATS]]
    for i in range(nv):
        a = qpos_of_dof[i] if mapping else i
        value = qpos[min(a, nq - 1)]  # the "no limit" entry (a = nq) is infinite anyway
        up = (upper_limits[a] - value) * gain
        low = (lower_limits[a] - value) * gain
        upper[i] = minimum(upper[i], up) if merge else up
        lower[i] = maximum(lower[i], low) if merge else low
    return True


@njit(cache=True, nogil=True)
def rows(
    ints: np.ndarray,
    scalars: np.ndarray,
    record: int,
    out: np.ndarray,
    rhs: np.ndarray,
    first: int,
) -> int:
    """One row per limited ball joint from ``first``; returns how many."""
    qpos = floats(ints[h.H_QPOS], ints[h.H_NQ])
    count = ints[record + C_NBALLS]
    addresses = int64s(ints[record + C_BALL_ADR], 2 * count)
    max_angles = floats(ints[record + C_BALL_MAX], count)
    gain = scalars[ints[record + h.R_FLOATS]]
    for ball in range(count):
        adr, dof = addresses[2 * ball], addresses[2 * ball + 1]
        w, x, y, z = qpos[adr], qpos[adr + 1], qpos[adr + 2], qpos[adr + 3]
        sine = math.sqrt(x * x + y * y + z * z)
        angle = 2.0 * math.atan2(sine, abs(w))
        row = out[first + ball]
        row[:] = 0.0
        if angle > _IDENTITY_ANGLE:
            scale = (-1.0 if w < 0.0 else 1.0) / sine
            row[dof] = scale * x
            row[dof + 1] = scale * y
            row[dof + 2] = scale * z
        rhs[first + ball] = gain * (max_angles[ball] - angle)
    return count
