r"""Compiled collision avoidance: one row per geom pair in range.

As :class:`~posekit.ik.limits.CollisionAvoidanceLimit` (its module docstring has the
derivation): with at least ``broadphase_min_pairs`` pairs, the same broadphase
(:func:`~posekit.ik.limits.broadphase.candidate_pairs`) picks the pairs worth an exact
``mj_geomDistance``; a pair closer than the detection distance gets the row
:math:`s\,\hat u^T (J_{p_2} - J_{p_1})` (``mju_normalize3`` for :math:`\hat u`, ``mj_jac``
at the nearest points; touching geoms: the line between their centres) and the bound :math:`\gamma (d - d_{\min}) + r` (or :math:`r` inside
:math:`d_{\min}`), in meters. Pairs out of range are left out (``0 ≤ +∞`` rows).

Record: pair count, broadphase flag, addresses of the geoms (``int64``), their bodies
(``int32``), the squared reaches and a candidate buffer. Scalars ``(gain, d_min,
detection distance, bound relaxation)``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from posekit.ik.compiled import header as h
from posekit.ik.compiled.native import (
    call_d_p,
    call_d_ppiidp,
    call_v_pppppi,
    floats,
    int32s,
    int64s,
    matrix,
)
from posekit.ik.compiled.packing import PackContext, Packed, all_columns, scalar
from posekit.ik.compiled.symbols import FN_GEOM_DISTANCE, FN_JAC, FN_NORMALIZE3
from posekit.ik.compiled.views import work_matrix
from posekit.ik.limits import CollisionAvoidanceLimit
from posekit.ik.limits.broadphase import candidate_pairs, pair_reach_squared

_DEGENERATE_SEGMENT = 1e-12  # [m], as the Python path
P_COUNT = h.R_FIRST
P_BROADPHASE = h.R_FIRST + 1
P_GEOMS = h.R_FIRST + 2  # geom1 then geom2, int64
P_BODIES = h.R_FIRST + 3  # body1 then body2, int32
P_REACH = h.R_FIRST + 4
P_CANDIDATES = h.R_FIRST + 5


def pack(limit: CollisionAvoidanceLimit, context: PackContext) -> Packed:
    """The record of a collision avoidance limit (module docstring)."""
    model = context.model
    pairs = np.array(limit.geom_id_pairs, dtype=np.int64).reshape(-1, 2)
    count = pairs.shape[0]
    detection = scalar(limit.collision_detection_distance, "collision_detection_distance")
    geoms = np.ascontiguousarray(pairs.T)
    bodies = np.ascontiguousarray(model.geom_bodyid[geoms], dtype=np.int32)
    reach = pair_reach_squared(model, geoms[0], geoms[1], detection)
    candidates = np.zeros(count, dtype=np.int64)
    arrays: list[np.ndarray] = [geoms, bodies, reach, candidates]
    packed = Packed(h.L_COLLISION, [], [], count, all_columns(model.nv), arrays)
    packed.ints = [
        count,
        int(bool(limit.broadphase) and count >= limit.broadphase_min_pairs),
        int(geoms.ctypes.data),
        int(bodies.ctypes.data),
        int(reach.ctypes.data),
        int(candidates.ctypes.data),
    ]
    packed.floats = [
        scalar(limit.gain, "gain"),
        scalar(limit.minimum_distance_from_collisions, "minimum_distance_from_collisions"),
        detection,
        scalar(limit.bound_relaxation, "bound_relaxation"),
    ]
    return packed


@njit(cache=True, nogil=True)
def _candidates(ints: np.ndarray, scalars: np.ndarray, record: int) -> tuple[np.ndarray, int]:
    """Indices of the pairs that need an exact distance, and how many there are."""
    count = ints[record + P_COUNT]
    geoms = int64s(ints[record + P_GEOMS], 2 * count)
    out = int64s(ints[record + P_CANDIDATES], count)
    if not ints[record + P_BROADPHASE]:
        for index in range(count):
            out[index] = index
        return out, count
    ngeom = ints[h.H_NGEOM]
    found = candidate_pairs(
        geoms[:count],
        geoms[count:],
        floats(ints[record + P_REACH], count),
        matrix(ints[h.H_GEOM_XPOS], ngeom, 3),
        matrix(ints[h.H_GEOM_XMAT], ngeom, 9),
        matrix(ints[h.H_GEOM_AABB], ngeom, 6),
        scalars[ints[record + h.R_FLOATS] + 2],
        out,
    )
    return out, found


@njit(cache=True, nogil=True)
def _direction(
    ints: np.ndarray, distance: float, fromto: np.ndarray, g1: int, g2: int, unit: np.ndarray
) -> tuple[float, float]:
    r"""The unit direction of the row in ``unit`` and its sign; sign 0: no direction.

    Nearest points apart: :math:`\hat u` from ``mju_normalize3`` and :math:`s`. Touching:
    the line between the geom centres, sign 1 (as the Python path).
    """
    dx, dy, dz = fromto[3] - fromto[0], fromto[4] - fromto[1], fromto[5] - fromto[2]
    if math.sqrt(dx * dx + dy * dy + dz * dz) > _DEGENERATE_SEGMENT:
        unit[0], unit[1], unit[2] = dx, dy, dz
        call_d_p(ints[h.H_FN + FN_NORMALIZE3], unit.ctypes.data)
        return -1.0 if distance >= 0.0 else 1.0, 1.0
    centers = matrix(ints[h.H_GEOM_XPOS], ints[h.H_NGEOM], 3)
    dx, dy, dz = (centers[g1, 0] - centers[g2, 0], centers[g1, 1] - centers[g2, 1],
                  centers[g1, 2] - centers[g2, 2])  # fmt: skip
    length = math.sqrt(dx * dx + dy * dy + dz * dz)
    if length <= _DEGENERATE_SEGMENT:
        return 0.0, 0.0
    unit[0], unit[1], unit[2] = dx / length, dy / length, dz / length
    return 1.0, 1.0


@njit(cache=True, nogil=True)
def _point_jacobian(ints: np.ndarray, jacobian: np.ndarray, point: int, body: int) -> None:
    """Translational Jacobian (``3 × nv``) of the world point at ``point`` moving with ``body``."""
    call_v_pppppi(
        ints[h.H_FN + FN_JAC], ints[h.H_MODEL], ints[h.H_DATA], jacobian.ctypes.data, 0, point, body
    )


@njit(cache=True, nogil=True)
def rows(
    ints: np.ndarray, scalars: np.ndarray, work: np.ndarray, record: int, out: np.ndarray,
    rhs: np.ndarray, first: int,
) -> int:  # fmt: skip
    """The rows of the pairs in range from ``first``; returns how many."""
    nv, count = ints[h.H_NV], ints[record + P_COUNT]
    base = ints[record + h.R_FLOATS]
    gain, d_min, detection, relaxation = (
        scalars[base],
        scalars[base + 1],
        scalars[base + 2],
        scalars[base + 3],
    )
    geoms = int64s(ints[record + P_GEOMS], 2 * count)
    bodies = int32s(ints[record + P_BODIES], 2 * count)
    start = ints[h.W_JAC]
    jac1 = work_matrix(ints, start, 3, nv)
    jac2 = work_matrix(ints, start + 3 * nv, 3, nv)
    fromto = work[start + 13 * nv : start + 13 * nv + 6]
    unit = work[start + 13 * nv + 6 : start + 13 * nv + 9]
    candidates, found = _candidates(ints, scalars, record)
    written = 0
    for k in range(found):
        index = candidates[k]
        g1, g2 = geoms[index], geoms[count + index]
        distance = call_d_ppiidp(
            ints[h.H_FN + FN_GEOM_DISTANCE], ints[h.H_MODEL], ints[h.H_DATA], g1, g2, detection,
            fromto.ctypes.data,
        )  # fmt: skip
        if distance >= detection:
            continue
        sign, found_direction = _direction(ints, distance, fromto, g1, g2, unit)
        if found_direction == 0.0:
            continue
        _point_jacobian(ints, jac1, fromto.ctypes.data, bodies[index])
        _point_jacobian(ints, jac2, fromto.ctypes.data + 8 * 3, bodies[count + index])
        row = out[first + written]
        for c in range(nv):
            along = (
                unit[0] * (jac2[0, c] - jac1[0, c])
                + unit[1] * (jac2[1, c] - jac1[1, c])
                + unit[2] * (jac2[2, c] - jac1[2, c])
            )
            row[c] = along * sign
        margin = distance - d_min
        rhs[first + written] = gain * margin + relaxation if margin > 0.0 else relaxation
        written += 1
    return written
