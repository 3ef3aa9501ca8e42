r"""Writing a task's rows into a stacked matrix, and the normal equations of the rows.

A task with error :math:`e \in \mathbb{R}^k`, Jacobian :math:`J` (``k × nv``), cost
:math:`w` and gain :math:`\alpha` writes, from row ``first`` of ``out`` and ``rhs``,

.. math:: \text{objective: } (\mathrm{diag}(w) J,\; -\alpha\, w \odot e), \qquad
          \text{constraint: } (J,\; -\alpha e),

the constraint form being the objective form with :math:`w = 1` (multiplying by 1.0 is
exact). Rows are written in full (zeros off the task's columns) and each helper returns
how many it wrote and :math:`\|\text{rhs}\|^2` over them, so :math:`\mu = \lambda
\|e_w\|^2`. An objective's row of zero cost (:math:`w_i = 0`, e.g. a frame task's
orientation rows with ``orientation_cost=0``) is a zero row of :math:`W` and :math:`E`:
it adds exact zeros to :math:`H` and :math:`c`, so it is not written at all (for a
finite error, the same :math:`H` and :math:`c`).
:func:`euclidean_norm` gives the unweighted :math:`\|e\|` the kinds' ``error_norm`` report.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def euclidean_norm(values: tuple | np.ndarray) -> float:
    r""":math:`\|e\|_2` of an error (a tuple of floats or a vector), summed in order."""
    squared_norm = 0.0
    for value in values:
        squared_norm += value * value
    return math.sqrt(squared_norm)


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
) -> tuple[int, float]:
    r"""Rows of :math:`J = L\,[J_p; J_r]` for a ``k × 6`` map ``L`` (row-major floats);
    returns ``(rows written, ‖rhs‖²)`` (zero-cost rows left out, module docstring)."""
    squared_norm = 0.0
    written = 0
    for i in range(len(error)):
        weight = cost[i] if weighted else 1.0
        if weight == 0.0:
            continue
        value = -gain * weight * error[i]
        rhs[first + written] = value
        squared_norm += value * value
        row = out[first + written]
        written += 1
        row[:] = 0.0
        _mapped_row(jacobian_map, i, world_jacobian, weight, row, columns)
    return written, squared_norm


@njit(cache=True, nogil=True)
def _mapped_row(
    jacobian_map: tuple,
    i: int,
    world_jacobian: np.ndarray,
    weight: float,
    row: np.ndarray,
    columns: np.ndarray,
) -> None:
    r"""``row[c] = weight · Σ_k L[i, k] [J_p; J_r][k, c]`` on ``columns``, the terms added
    in ``k`` order. When :math:`L_{i,0:3} = 0` (an axis-align task's rows) the sum
    starts at :math:`k = 3`: the terms left out are zeros (the Jacobians are finite), so
    the sums are the same. The columns are walked by index: iterating over the array
    itself compiles to a slower loop."""
    m0, m1, m2 = jacobian_map[6 * i], jacobian_map[6 * i + 1], jacobian_map[6 * i + 2]
    m3, m4, m5 = jacobian_map[6 * i + 3], jacobian_map[6 * i + 4], jacobian_map[6 * i + 5]
    j0, j1, j2 = world_jacobian[0], world_jacobian[1], world_jacobian[2]
    j3, j4, j5 = world_jacobian[3], world_jacobian[4], world_jacobian[5]
    if m0 == 0.0 and m1 == 0.0 and m2 == 0.0:
        for a in range(columns.shape[0]):
            c = columns[a]
            row[c] = weight * (m3 * j3[c] + m4 * j4[c] + m5 * j5[c])
        return
    for a in range(columns.shape[0]):
        c = columns[a]
        total = m0 * j0[c] + m1 * j1[c] + m2 * j2[c]
        row[c] = weight * (total + m3 * j3[c] + m4 * j4[c] + m5 * j5[c])


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
) -> tuple[int, float]:
    r"""Rows of an explicit Jacobian ``jacobian`` (``k × nv``) with error ``error`` (``k``);
    returns ``(rows written, ‖rhs‖²)`` (zero-cost rows left out, module docstring)."""
    squared_norm = 0.0
    written = 0
    for i in range(error.shape[0]):
        weight = cost[i] if weighted else 1.0
        if weight == 0.0:
            continue
        value = -gain * weight * error[i]
        rhs[first + written] = value
        squared_norm += value * value
        row = out[first + written]
        written += 1
        row[:] = 0.0
        source = jacobian[i]
        for a in range(columns.shape[0]):
            c = columns[a]
            row[c] = weight * source[c]
    return written, squared_norm


@njit(cache=True, nogil=True)
def add_normal_equations(
    rows: np.ndarray,
    rhs: np.ndarray,
    first: int,
    count: int,
    columns: np.ndarray,
    hessian: np.ndarray,
    gradient: np.ndarray,
    packed: np.ndarray,
) -> None:
    r"""Add :math:`W^T W` (upper triangle) and :math:`W^T E` of rows ``first…first+count``.

    Only the rows' ``columns`` (sorted) can be non-zero, so the cost is
    ``count × len(columns)²`` instead of ``count × nv²`` (the skipped terms are exact
    zeros). The rows are gathered column by column into ``packed`` (``len(columns) ×
    count``), so each entry of :math:`W^T W` is a short dot product of contiguous
    columns.
    """
    n = columns.shape[0]
    for a in range(n):
        column = columns[a]
        target = packed[a]
        total = 0.0
        for r in range(count):
            weight = rows[first + r, column]
            target[r] = weight
            total += weight * rhs[first + r]
        gradient[column] += total
    if n == hessian.shape[0] and (count == 3 or count == 6):  # every column: 0, 1, …, nv - 1
        _add_full_rows(rows, first, count, hessian)
        return
    for a in range(n):
        hessian_row = hessian[columns[a]]
        if count == 3:
            _add_dot_products_3(packed, a, columns, hessian_row)
        elif count == 6:
            _add_dot_products_6(packed, a, columns, hessian_row)
        else:
            _add_dot_products(packed, count, a, columns, hessian_row)


@njit(cache=True, nogil=True)
def _add_full_rows(rows: np.ndarray, first: int, count: int, hessian: np.ndarray) -> None:
    """The upper triangle of :math:`W^T W` for 3 or 6 rows over every column, read from
    the rows themselves: the same sums in the same order as :func:`_add_dot_products_3`
    and :func:`_add_dot_products_6` with the identity as ``columns``. Row ``a`` is
    updated through views that start at column ``a``, so the inner loop's index starts
    at 0: a negative index is then impossible, and without its wrap-around test the
    compiler vectorises the loop (the same operations per entry, so the same sums)."""
    n = hessian.shape[0]
    if count == 3:
        for a in range(n):
            r0, r1, r2 = rows[first, a:], rows[first + 1, a:], rows[first + 2, a:]
            x0, x1, x2 = r0[0], r1[0], r2[0]
            target = hessian[a, a:]
            for b in range(n - a):
                target[b] += x0 * r0[b] + x1 * r1[b] + x2 * r2[b]
        return
    for a in range(n):
        r0, r1, r2 = rows[first, a:], rows[first + 1, a:], rows[first + 2, a:]
        r3, r4, r5 = rows[first + 3, a:], rows[first + 4, a:], rows[first + 5, a:]
        x0, x1, x2, x3, x4, x5 = r0[0], r1[0], r2[0], r3[0], r4[0], r5[0]
        target = hessian[a, a:]
        for b in range(n - a):
            target[b] += x0 * r0[b] + x1 * r1[b] + x2 * r2[b] + x3 * r3[b] + x4 * r4[b] + x5 * r5[b]


@njit(cache=True, nogil=True)
def _add_dot_products_3(
    packed: np.ndarray, a: int, columns: np.ndarray, hessian_row: np.ndarray
) -> None:
    """``hessian_row[columns[b]] += packed[a] · packed[b]`` for ``b ≥ a``, rows of 3 (unrolled)."""
    x0, x1, x2 = packed[a, 0], packed[a, 1], packed[a, 2]
    for b in range(a, columns.shape[0]):
        p = packed[b]
        hessian_row[columns[b]] += x0 * p[0] + x1 * p[1] + x2 * p[2]


@njit(cache=True, nogil=True)
def _add_dot_products_6(
    packed: np.ndarray, a: int, columns: np.ndarray, hessian_row: np.ndarray
) -> None:
    """As :func:`_add_dot_products_3` for rows of 6 (a frame or relative frame task)."""
    left = packed[a]
    x0, x1, x2, x3, x4, x5 = left[0], left[1], left[2], left[3], left[4], left[5]
    for b in range(a, columns.shape[0]):
        p = packed[b]
        hessian_row[columns[b]] += (
            x0 * p[0] + x1 * p[1] + x2 * p[2] + x3 * p[3] + x4 * p[4] + x5 * p[5]
        )


@njit(cache=True, nogil=True)
def _add_dot_products(
    packed: np.ndarray, count: int, a: int, columns: np.ndarray, hessian_row: np.ndarray
) -> None:
    """``hessian_row[columns[b]] += packed[a] · packed[b]`` for ``b ≥ a`` (any row count).

    Each dot product adds its terms in row order, as the unrolled variants do.
    """
    left = packed[a]
    for b in range(a, columns.shape[0]):
        right = packed[b]
        total = 0.0
        for r in range(count):
            total += left[r] * right[r]
        hessian_row[columns[b]] += total


@njit(cache=True, nogil=True)
def mirror_upper(hessian: np.ndarray) -> None:
    """Copy the upper triangle of a square matrix onto its lower triangle.

    Row by row of the lower triangle (contiguous stores, the column read with a stride),
    each inner index from 0: about twice as fast as writing down the columns."""
    n = hessian.shape[0]
    for j in range(1, n):
        row = hessian[j]
        for i in range(j):
            row[i] = hessian[i, j]
