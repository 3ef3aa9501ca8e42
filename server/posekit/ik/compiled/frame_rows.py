r"""A frame task's six rows :math:`J = L\,[J_p; J_r]`, written column by column.

The same rows, sums and right-hand sides as :func:`~posekit.ik.compiled.rows.mapped_rows`
with a ``6 × 6`` map :math:`L` (a frame or relative frame task): row :math:`i` of
``out`` gets :math:`w_i \sum_k L_{ik} [J_p; J_r]_{kc}` on the task's columns :math:`c`,
the terms added in :math:`k` order, zero-cost rows left out. Here the loop runs over
the columns: a column's six Jacobian entries are loaded once for the six rows, and the
36 entries of :math:`L` stay in registers (a row-by-row loop reads them, and the
Jacobian, again for every row). When the angular rows' linear block
:math:`L_{3:6,\,0:3}` is zero (a frame task's map) their sums start at :math:`k = 3`:
the terms left out are zeros (finite Jacobians), so the sums are the same.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _kept_rows(
    error: tuple, cost: np.ndarray, weighted: bool, gain: float, out: np.ndarray,
    rhs: np.ndarray, first: int,
) -> tuple[tuple[int, int, int, int, int, int], int, float]:  # fmt: skip
    """Right-hand sides :math:`-\\alpha w_i e_i` of the rows of non-zero cost, their rows
    of ``out`` zeroed; returns each row's index in ``out`` (-1: left out), the rows
    written and :math:`\\|\\text{rhs}\\|^2`."""
    r0 = r1 = r2 = r3 = r4 = r5 = -1
    squared_norm = 0.0
    written = 0
    for i in range(6):
        weight = cost[i] if weighted else 1.0
        if weight == 0.0:
            continue
        value = -gain * weight * error[i]
        rhs[first + written] = value
        squared_norm += value * value
        row = first + written
        out[row, :] = 0.0
        written += 1
        if i == 0:
            r0 = row
        elif i == 1:
            r1 = row
        elif i == 2:
            r2 = row
        elif i == 3:
            r3 = row
        elif i == 4:
            r4 = row
        else:
            r5 = row
    return (r0, r1, r2, r3, r4, r5), written, squared_norm


@njit(cache=True, nogil=True)
def frame_rows(
    error: tuple, jacobian_map: tuple, world_jacobian: np.ndarray, cost: np.ndarray,
    weighted: bool, gain: float, out: np.ndarray, rhs: np.ndarray, first: int,
    columns: np.ndarray,
) -> tuple[int, float]:  # fmt: skip
    """Write the six rows (module docstring) from ``first``; returns ``(rows, ‖rhs‖²)``."""
    (r0, r1, r2, r3, r4, r5), written, squared_norm = _kept_rows(
        error, cost, weighted, gain, out, rhs, first
    )
    w0, w1, w2 = (cost[0], cost[1], cost[2]) if weighted else (1.0, 1.0, 1.0)
    w3, w4, w5 = (cost[3], cost[4], cost[5]) if weighted else (1.0, 1.0, 1.0)
    (a00, a01, a02, a03, a04, a05, a10, a11, a12, a13, a14, a15,
     a20, a21, a22, a23, a24, a25, a30, a31, a32, a33, a34, a35,
     a40, a41, a42, a43, a44, a45, a50, a51, a52, a53, a54, a55) = jacobian_map  # fmt: skip
    angular = (
        a30 == 0.0 and a31 == 0.0 and a32 == 0.0 and a40 == 0.0 and a41 == 0.0
        and a42 == 0.0 and a50 == 0.0 and a51 == 0.0 and a52 == 0.0
    )  # fmt: skip
    j0, j1, j2 = world_jacobian[0], world_jacobian[1], world_jacobian[2]
    j3, j4, j5 = world_jacobian[3], world_jacobian[4], world_jacobian[5]
    for a in range(columns.shape[0]):
        c = columns[a]
        x0, x1, x2, x3, x4, x5 = j0[c], j1[c], j2[c], j3[c], j4[c], j5[c]
        if r0 >= 0:
            out[r0, c] = w0 * (a00 * x0 + a01 * x1 + a02 * x2 + a03 * x3 + a04 * x4 + a05 * x5)
        if r1 >= 0:
            out[r1, c] = w1 * (a10 * x0 + a11 * x1 + a12 * x2 + a13 * x3 + a14 * x4 + a15 * x5)
        if r2 >= 0:
            out[r2, c] = w2 * (a20 * x0 + a21 * x1 + a22 * x2 + a23 * x3 + a24 * x4 + a25 * x5)
        if angular:
            if r3 >= 0:
                out[r3, c] = w3 * (a33 * x3 + a34 * x4 + a35 * x5)
            if r4 >= 0:
                out[r4, c] = w4 * (a43 * x3 + a44 * x4 + a45 * x5)
            if r5 >= 0:
                out[r5, c] = w5 * (a53 * x3 + a54 * x4 + a55 * x5)
            continue
        if r3 >= 0:
            out[r3, c] = w3 * (a30 * x0 + a31 * x1 + a32 * x2 + a33 * x3 + a34 * x4 + a35 * x5)
        if r4 >= 0:
            out[r4, c] = w4 * (a40 * x0 + a41 * x1 + a42 * x2 + a43 * x3 + a44 * x4 + a45 * x5)
        if r5 >= 0:
            out[r5, c] = w5 * (a50 * x0 + a51 * x1 + a52 * x2 + a53 * x3 + a54 * x4 + a55 * x5)
    return written, squared_norm
