r"""Compiled configuration limit: joint ranges as simple bounds, ball joints as rows.

As :class:`~posekit.ik.limits.ConfigurationLimit`: for every DoF, with the limited
hinge/slide range :math:`[l_i, u_i]` (±∞ elsewhere) and its coordinate :math:`q_i`,

.. math:: \gamma\,(l_i - q_i) \le \Delta q_i \le \gamma\,(u_i - q_i),

and for a limited ball joint whose rotation has angle :math:`\theta` about the unit
axis :math:`n` (skipped at identity, where the angle has no gradient) the row
:math:`n^T \Delta\omega \le \gamma(\theta_{\max} - d - \theta)`.

Record: addresses of the per-DoF qpos addresses (``int32``), upper and lower ranges;
the number of limited balls and addresses of their qpos/dof addresses (``int32``) and
maximum angles. Scalars ``(gain, min_distance_from_limits)``.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np
from numba import njit

from posekit.ik.compiled import header as h
from posekit.ik.compiled.native import floats, int32s
from posekit.ik.compiled.packing import NotCompiled, PackContext, Packed, all_columns, scalar
from posekit.ik.limits import ConfigurationLimit

C_QPOS_ADR = h.R_FIRST
C_UPPER = h.R_FIRST + 1
C_LOWER = h.R_FIRST + 2
C_NBALLS = h.R_FIRST + 3
C_BALL_ADR = h.R_FIRST + 4  # int32 pairs (qpos address, dof address)
C_BALL_MAX = h.R_FIRST + 5


def pack(limit: ConfigurationLimit, context: PackContext) -> Packed:
    """The record of a configuration limit (module docstring)."""
    model = context.model
    indices = np.asarray(limit.indices, dtype=np.int64)
    lower = np.asarray(limit.lower, dtype=np.float64)
    upper = np.asarray(limit.upper, dtype=np.float64)
    if not lower.shape == upper.shape == indices.shape:
        raise NotCompiled("ConfigurationLimit.lower/upper do not match its indices")
    qpos_adr = np.zeros(model.nv, dtype=np.int32)
    qpos_adr[indices] = model.jnt_qposadr[model.dof_jntid[indices]]
    dof_upper = np.full(model.nv, np.inf)
    dof_lower = np.full(model.nv, -np.inf)
    dof_upper[indices] = upper
    dof_lower[indices] = lower
    balls = [
        j
        for j in range(model.njnt)
        if model.jnt_limited[j] and model.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL
    ]
    ball_adr = np.array(
        [[model.jnt_qposadr[j], model.jnt_dofadr[j]] for j in balls], dtype=np.int32
    ).reshape(-1, 2)
    ball_max = np.array([model.jnt_range[j, 1] for j in balls], dtype=np.float64)
    arrays = [qpos_adr, dof_upper, dof_lower, ball_adr, ball_max]
    packed = Packed(h.L_CONFIGURATION, [], [], len(balls), all_columns(model.nv), arrays)
    packed.ints = [
        int(qpos_adr.ctypes.data),
        int(dof_upper.ctypes.data),
        int(dof_lower.ctypes.data),
        len(balls),
        int(ball_adr.ctypes.data),
        int(ball_max.ctypes.data),
    ]
    packed.floats = [
        scalar(limit.gain, "gain"),
        scalar(limit.min_distance_from_limits, "min_distance_from_limits"),
    ]
    return packed


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
    r"""Set (or, with ``merge``, intersect) ``lower``/``upper`` with the range bounds."""
    nv = ints[h.H_NV]
    qpos = floats(ints[h.H_QPOS], ints[h.H_NQ])
    qpos_adr = int32s(ints[record + C_QPOS_ADR], nv)
    dof_upper = floats(ints[record + C_UPPER], nv)
    dof_lower = floats(ints[record + C_LOWER], nv)
    gain = scalars[ints[record + h.R_FLOATS]]
    for i in range(nv):
        value = qpos[qpos_adr[i]]
        up = (dof_upper[i] - value) * gain
        low = (dof_lower[i] - value) * gain
        upper[i] = minimum(upper[i], up) if merge else up
        lower[i] = maximum(lower[i], low) if merge else low
    return True


@njit(cache=True, nogil=True)
def rows(
    ints: np.ndarray, scalars: np.ndarray, record: int, out: np.ndarray, rhs: np.ndarray, first: int
) -> int:
    """Ball-joint rows from ``first``; returns how many."""
    qpos = floats(ints[h.H_QPOS], ints[h.H_NQ])
    count = ints[record + C_NBALLS]
    addresses = int32s(ints[record + C_BALL_ADR], 2 * count)
    max_angles = floats(ints[record + C_BALL_MAX], count)
    base = ints[record + h.R_FLOATS]
    gain, min_distance = scalars[base], scalars[base + 1]
    written = 0
    for ball in range(count):
        adr, dof = addresses[2 * ball], addresses[2 * ball + 1]
        w, x, y, z = qpos[adr], qpos[adr + 1], qpos[adr + 2], qpos[adr + 3]
        sine = math.sqrt(x * x + y * y + z * z)
        if sine < 1e-9:
            continue
        angle = 2.0 * math.atan2(sine, abs(w))
        sign = -1.0 if w < 0.0 else 1.0
        row = out[first + written]
        row[:] = 0.0
        row[dof] = x / sine * sign
        row[dof + 1] = y / sine * sign
        row[dof + 2] = z / sine * sign
        rhs[first + written] = gain * (max_angles[ball] - min_distance - angle)
        written += 1
    return written
