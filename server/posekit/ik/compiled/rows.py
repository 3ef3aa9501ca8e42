r"""Writing a task's rows into a stacked matrix, and the normal equations of the rows.

A task with error :math:`e \in \mathbb{R}^k`, Jacobian :math:`J` (``k × nv``), cost
:math:`w` and gain :math:`\alpha` writes, from row ``first`` of ``out`` and ``rhs``,

.. math:: \text{objective: } (\mathrm{diag}(w) J,\; -\alpha\, w \odot e), \qquad
          \text{constraint: } (J,\; -\alpha e),

the constraint form being the objective form with :math:`w = 1` (multiplying by 1.0 is
exact). Rows are written in full (zeros off the task's columns) and each helper returns
:math:`\|\text{rhs}\|^2` over its rows, so :math:`\mu = \lambda \|e_w\|^2`.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def mapped_rows(
    error: tuple,
    jacobian_map: tuple,
    world_jacobian: np.ndarray,
    cost: np.ndarray,
    weighted: bool,
    gain: float,
    out: np.ndarray,
    rhs: np.ndarray,
    first: int,
    columns: np.ndarray,
) -> float:
    r"""Rows of :math:`J = L\,[J_p; J_r]` for a ``k × 6`` map ``L`` (row-major floats)."""
    squared_norm = 0.0
    for i in range(len(error)):
        weight = cost[i] if weighted else 1.0
        value = -gain * weight * error[i]
        rhs[first + i] = value
        squared_norm += value * value
        row = out[first + i]
        row[:] = 0.0
        for column in columns:
            total = 0.0
            for k in range(6):
                total += jacobian_map[6 * i + k] * world_jacobian[k, column]
            row[column] = weight * total
    return squared_norm


@njit(cache=True, nogil=True)
def dense_rows(
    error: np.ndarray,
    jacobian: np.ndarray,
    cost: np.ndarray,
    weighted: bool,
    gain: float,
    out: np.ndarray,
    rhs: np.ndarray,
    first: int,
    columns: np.ndarray,
) -> float:
    r"""Rows of an explicit Jacobian ``jacobian`` (``k × nv``) with error ``error`` (``k``)."""
    squared_norm = 0.0
    for i in range(error.shape[0]):
        weight = cost[i] if weighted else 1.0
        value = -gain * weight * error[i]
        rhs[first + i] = value
        squared_norm += value * value
        row = out[first + i]
        row[:] = 0.0
        for column in columns:
            row[column] = weight * jacobian[i, column]
    return squared_norm


@njit(cache=True, nogil=True)
def add_normal_equations(
    rows: np.ndarray,
    rhs: np.ndarray,
    first: int,
    count: int,
    columns: np.ndarray,
    hessian: np.ndarray,
    gradient: np.ndarray,
) -> None:
    r"""Add :math:`W^T W` (upper triangle) and :math:`W^T E` of rows ``first…first+count``.

    Only the rows' ``columns`` (sorted) can be non-zero, so the cost is
    ``count × len(columns)²`` instead of ``count × nv²``; the skipped terms are exact
    zeros, so the sums are those of the dense product.
    """
    n = columns.shape[0]
    for r in range(first, first + count):
        row = rows[r]
        value = rhs[r]
        for a in range(n):
            ca = columns[a]
            wa = row[ca]
            gradient[ca] += wa * value
            hessian_row = hessian[ca]
            for b in range(a, n):
                cb = columns[b]
                hessian_row[cb] += wa * row[cb]


@njit(cache=True, nogil=True)
def mirror_upper(hessian: np.ndarray) -> None:
    """Copy the upper triangle of a square matrix onto its lower triangle."""
    n = hessian.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            hessian[j, i] = hessian[i, j]
