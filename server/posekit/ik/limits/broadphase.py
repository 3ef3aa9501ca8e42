r"""Broadphase of the collision-avoidance limit: which geom pairs may be within range.

A pair is a candidate for the exact ``mj_geomDistance`` query only when a cheap lower
bound on its distance is at most the detection distance. Two bounds, both conservative
(never larger than the true distance), are tried in turn:

1. bounding spheres: :math:`\|x_1 - x_2\| - r_1 - r_2` with MuJoCo's ``geom_rbound``;
2. sphere against oriented box: each geom's local axis-aligned box (``geom_aabb``:
   centre :math:`a` and half-sizes :math:`h` in the geom frame) placed in the world,
   :math:`\max_i \big(\|\max(|R_j^T (c_i - c_j)| - h_j, 0)\| - \|h_i\|\big)`, which is
   tight for long or flat geoms (tables, frames, links) where spheres are loose.

Pairs with an unbounded geom (planes: ``rbound = 0``) are always candidates.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np
from numba import njit


def pair_reach_squared(
    model: mujoco.MjModel, geom1: np.ndarray, geom2: np.ndarray, detection: float
) -> np.ndarray:
    r"""Per pair, the largest squared centre distance at which it may be in range [m²].

    :math:`(r_1 + r_2 + d_{\mathrm{detect}})^2` from ``geom_rbound``; :math:`+\infty` for a
    pair with an unbounded geom (a plane: ``rbound = 0``); :math:`-1` when the reach is
    negative (a negative detection distance deeper than both spheres: never in range).
    """
    radius1 = model.geom_rbound[geom1]
    radius2 = model.geom_rbound[geom2]
    reach = radius1 + radius2 + detection
    unbounded = (radius1 <= 0.0) | (radius2 <= 0.0)
    return np.where(unbounded, np.inf, np.where(reach < 0.0, -1.0, reach * reach))


@njit(cache=True, nogil=True)
def _box_gap(
    center_a: tuple[float, float, float], radius_a: float, center_b: tuple[float, float, float],
    rotation_b: np.ndarray, half_b: np.ndarray,
) -> float:  # fmt: skip
    """Lower bound on the distance between a sphere and an oriented box [m]."""
    dx = center_a[0] - center_b[0]
    dy = center_a[1] - center_b[1]
    dz = center_a[2] - center_b[2]
    total = 0.0
    for axis in range(3):
        local = rotation_b[axis] * dx + rotation_b[3 + axis] * dy + rotation_b[6 + axis] * dz
        excess = abs(local) - half_b[axis]
        if excess > 0.0:
            total += excess * excess
    return math.sqrt(total) - radius_a


@njit(cache=True, nogil=True)
def _box_center(
    position: np.ndarray, rotation: np.ndarray, offset: np.ndarray
) -> tuple[float, float, float]:
    """World centre of a geom's local box: ``position + rotation @ offset``."""
    return (
        position[0] + (rotation[0] * offset[0] + rotation[1] * offset[1] + rotation[2] * offset[2]),
        position[1] + (rotation[3] * offset[0] + rotation[4] * offset[1] + rotation[5] * offset[2]),
        position[2] + (rotation[6] * offset[0] + rotation[7] * offset[1] + rotation[8] * offset[2]),
    )


@njit(cache=True, nogil=True)
def candidate_pairs(
    geom1: np.ndarray,
    geom2: np.ndarray,
    reach_sq: np.ndarray,
    geom_xpos: np.ndarray,
    geom_xmat: np.ndarray,
    geom_aabb: np.ndarray,
    detection: float,
    out: np.ndarray,
) -> int:
    """Write the indices of the candidate pairs into ``out``; return how many there are."""
    count = 0
    for index in range(geom1.shape[0]):
        a = geom1[index]
        b = geom2[index]
        limit = reach_sq[index]
        if math.isinf(limit):
            out[count] = index
            count += 1
            continue
        dx = geom_xpos[a, 0] - geom_xpos[b, 0]
        dy = geom_xpos[a, 1] - geom_xpos[b, 1]
        dz = geom_xpos[a, 2] - geom_xpos[b, 2]
        if dx * dx + dy * dy + dz * dz > limit:
            continue
        half_a = geom_aabb[a, 3:]
        half_b = geom_aabb[b, 3:]
        center_a = _box_center(geom_xpos[a], geom_xmat[a], geom_aabb[a, :3])
        center_b = _box_center(geom_xpos[b], geom_xmat[b], geom_aabb[b, :3])
        radius_a = math.sqrt(half_a[0] ** 2 + half_a[1] ** 2 + half_a[2] ** 2)
        radius_b = math.sqrt(half_b[0] ** 2 + half_b[1] ** 2 + half_b[2] ** 2)
        gap = max(
            _box_gap(center_a, radius_a, center_b, geom_xmat[b], half_b),
            _box_gap(center_b, radius_b, center_a, geom_xmat[a], half_a),
        )
        if gap <= detection:
            out[count] = index
            count += 1
    return count
