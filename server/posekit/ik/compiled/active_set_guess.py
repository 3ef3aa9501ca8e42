r"""The QP solved on a guessed active set — the last step's — when its optimality
conditions hold, so that daqp is not called.

The IK QP is :math:`\min_x \tfrac12 x^T H x + c^T x` subject to :math:`l \le x \le u`
and :math:`G x \le h` (no equality rows here), with :math:`H` positive definite. Between
two steps the bounds that hold a joint (at a joint limit, or at its speed limit) rarely
change. With the guess :math:`\mathcal{A}` (each variable free, or held at its lower or
upper bound, as the last step's solution had it), the candidate is

.. math:: x_{\mathcal{A}} = b_{\mathcal{A}}, \qquad
          H_{FF}\, x_F = -(c_F + H_{F\mathcal{A}}\, x_{\mathcal{A}})

(:math:`F` the free variables; :math:`H_{FF} = L L^T` by Cholesky). It is the QP's unique
solution when the KKT conditions hold: every free variable within its bounds, every
row satisfied, and every held variable's multiplier — its gradient component
:math:`g_i = (H x + c)_i` — of the right sign (:math:`g_i > 0` at a lower bound,
:math:`g_i < 0` at an upper one). Checked exactly, no tolerance.

**Why the answer is daqp's.** daqp stops once no constraint is violated by more than
its ``primal_tol`` (:math:`\tau`, 1e-6 by default), so it can leave a bound that the exact
solution holds violated by less than :math:`\tau` — up to ~1e-6 away from the exact
point. Releasing a held bound :math:`i` moves :math:`x_i` past it by
:math:`|g_i| / S_{ii} \ge |g_i| / H_{ii}` (:math:`S` the Schur complement, at most the
diagonal), so the guess is taken only when every held bound has
:math:`|g_i| > ` :data:`MARGIN` :math:`\tau H_{ii}`: daqp could not have stopped
without it, and both solve the same equality-constrained problem, agreeing to rounding.
The factor must be well conditioned too (every pivot :math:`L_{jj}^2` at least
:data:`MIN_PIVOT` times the largest diagonal of :math:`H_{FF}`).

**Corrections.** When the candidate fails only because bounds changed — a free
variable beyond a bound, or a held one whose multiplier has the wrong sign by more
than the margin — the guess is corrected (:func:`correct`: hold the first at the bound
it crossed, free the second) and solved again, up to :data:`CORRECTIONS` times: a
joint reaching or leaving its limit between two steps usually costs one more factor,
not a daqp call. Every candidate passes the same exact test before it is taken.

With rows (:math:`G`), only the empty guess (the unconstrained minimiser) is tried.
A guess that fails leaves daqp to solve as before. With rows, after consecutive
failures the guess is skipped for 1, 3, 7, then 15 steps (:func:`backoff`), so a problem
whose solution keeps changing its active set pays little for trying. With bounds only
it is tried every step: a failed try costs at most ``CORRECTIONS + 1`` factors of
:math:`H_{FF}` (:math:`\le n^3/2` flops), while daqp's setup alone factors and inverts
:math:`H` (:math:`\approx n^3/2` flops, in scalar code) before it iterates, and a guess
that failed on a multiplier within the margin (a joint resting lightly on its limit)
often holds again a step later.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

MIN_PIVOT = 1e-8
"""Smallest accepted :math:`L_{jj}^2 / \\max_i H_{ii}` (a factor that solves to rounding)."""
MARGIN = 4.0
"""How many times daqp's ``primal_tol`` releasing a held bound must violate it by."""
CORRECTIONS = 2
"""How many times a failed guess is corrected and solved again before daqp is called."""
AT_BOUND = 1e-12
"""Relative distance to a bound at which a solution's variable counts as held there."""

# Reassociation lets LLVM vectorise the dot products (the answer moves by rounding only);
# NaN and infinity keep their meaning, so the pivot test still refuses them.
_FAST = {"reassoc", "contract"}


@njit(cache=True, nogil=True, fastmath=_FAST)
def cholesky(factor: np.ndarray, n: int, y: np.ndarray) -> bool:
    r"""Factor the ``n × n`` matrix in the lower triangle of ``factor`` in place
    (:math:`A = L L^T`, with :math:`1 / L_{jj}` stored on the diagonal) and solve
    :math:`L z = y` in ``y`` on the way; False when a pivot is below ``MIN_PIVOT`` times
    the largest diagonal entry (not positive definite enough, or NaN).

    Column :math:`j`: :math:`L_{jj} = \sqrt{A_{jj} - \sum_{k<j} L_{jk}^2}` and
    :math:`z_j = (y_j - \sum_{k<j} L_{jk} z_k) / L_{jj}` (the same row, one pass), then
    :math:`L_{ij} = (A_{ij} - \sum_{k<j} L_{ik} L_{jk}) / L_{jj}` for :math:`i > j`
    (:func:`_column`). Dividing means multiplying by :math:`1 / L_{jj}`, computed once per
    column: the answer moves by rounding only. The forward solve's chain of dependent
    operations then overlaps the factor's independent ones instead of following them."""
    largest = 0.0
    for j in range(n):
        largest = max(largest, factor[j, j])
    floor = MIN_PIVOT * largest
    if not floor > 0.0:
        return False
    for j in range(n):
        row = factor[j]
        pivot = row[j]
        total = y[j]
        for k in range(j):
            pivot -= row[k] * row[k]
            total -= row[k] * y[k]
        if not pivot > floor:
            return False
        inverse = 1.0 / math.sqrt(pivot)
        row[j] = inverse
        y[j] = total * inverse
        _column(factor, n, j, inverse)
    return True


@njit(cache=True, nogil=True, fastmath=_FAST)
def _column(factor: np.ndarray, n: int, j: int, inverse: float) -> None:
    r""":math:`L_{ij}` for every :math:`i > j` (``inverse`` is :math:`1 / L_{jj}`), four
    rows :math:`i \dots i+3` per pass so that each :math:`L_{jk}` is loaded once for the
    four, then the last ones one by one."""
    row = factor[j]
    i = j + 1
    while i + 3 < n:
        r0, r1, r2, r3 = factor[i], factor[i + 1], factor[i + 2], factor[i + 3]
        s0, s1, s2, s3 = r0[j], r1[j], r2[j], r3[j]
        for k in range(j):
            l_jk = row[k]
            s0 -= r0[k] * l_jk
            s1 -= r1[k] * l_jk
            s2 -= r2[k] * l_jk
            s3 -= r3[k] * l_jk
        r0[j], r1[j], r2[j], r3[j] = s0 * inverse, s1 * inverse, s2 * inverse, s3 * inverse
        i += 4
    while i < n:
        last = factor[i]
        total = last[j]
        for k in range(j):
            total -= last[k] * row[k]
        last[j] = total * inverse
        i += 1


@njit(cache=True, nogil=True, fastmath=_FAST)
def back_substitute(factor: np.ndarray, z: np.ndarray, n: int) -> None:
    r""":math:`z \leftarrow L^{-T} z` for the first ``n`` entries, with ``factor`` as
    :func:`cholesky` left it (so that, after it, ``z`` is :math:`(L L^T)^{-1} y`)."""
    for i in range(n - 1, -1, -1):
        z[i] *= factor[i, i]
        for k in range(i):
            z[k] -= factor[i, k] * z[i]


@njit(cache=True, nogil=True)
def hold(
    x: np.ndarray, side: np.ndarray, free: np.ndarray, bounds: int, lower: np.ndarray,
    upper: np.ndarray,
) -> int:  # fmt: skip
    """Set the held variables of the guess ``side`` (-1 lower, +1 upper, 0 free) to their
    bounds, list the free ones at the start of ``free`` and the held ones after them;
    returns how many are free (-1 when a held bound is not finite)."""
    n = x.shape[0]
    count = 0
    last = n
    for i in range(n):
        held = side[i] if bounds else 0.0
        if held == 0.0:
            free[count] = i
            count += 1
            continue
        last -= 1
        free[last] = i
        x[i] = lower[i] if held < 0.0 else upper[i]
        if not math.isfinite(x[i]):
            return -1
    return count


@njit(cache=True, nogil=True, fastmath=_FAST)
def reduce(
    hessian: np.ndarray, gradient: np.ndarray, x: np.ndarray, free: np.ndarray, count: int,
    factor: np.ndarray, reduced: np.ndarray,
) -> None:  # fmt: skip
    """:math:`H_{FF}` into ``factor`` (lower triangle) and
    :math:`-(c_F + H_{F\\mathcal{A}} x_{\\mathcal{A}})` into ``reduced`` (``free`` as
    :func:`hold` left it: the free variables, then the held ones)."""
    n = x.shape[0]
    for a in range(count):
        i = free[a]
        row = hessian[i]
        total = -gradient[i]
        for b in range(n - 1, count - 1, -1):  # the held ones in increasing order
            total -= row[free[b]] * x[free[b]]
        reduced[a] = total
        for b in range(a + 1):
            factor[a, b] = row[free[b]]


@njit(cache=True, nogil=True)
def optimal(
    hessian: np.ndarray, gradient: np.ndarray, x: np.ndarray, side: np.ndarray, bounds: int,
    lower: np.ndarray, upper: np.ndarray, rows: np.ndarray, rhs: np.ndarray,
    inequalities: int, tolerance: float,
) -> bool:  # fmt: skip
    """The KKT conditions of ``x`` on the guess (module docstring), exactly; held bounds'
    multipliers beyond ``MARGIN`` times ``tolerance`` (daqp's ``primal_tol``)."""
    n = x.shape[0]
    for i in range(n):
        held = side[i] if bounds else 0.0
        if held == 0.0:
            if bounds and not lower[i] <= x[i] <= upper[i]:
                return False
            continue
        g = gradient[i]
        for j in range(n):
            g += hessian[i, j] * x[j]
        if not held * g < -MARGIN * tolerance * hessian[i, i]:
            return False
    for r in range(inequalities):
        total = 0.0
        for k in range(n):
            total += rows[r, k] * x[k]
        if not total <= rhs[r]:
            return False
    return True


@njit(cache=True, nogil=True)
def correct(
    hessian: np.ndarray, gradient: np.ndarray, x: np.ndarray, side: np.ndarray,
    lower: np.ndarray, upper: np.ndarray, tolerance: float,
) -> bool:  # fmt: skip
    """Correct the guess ``side`` after a candidate ``x`` that failed :func:`optimal` on
    bounds only: hold each free variable beyond a bound at that bound, free each held one
    whose multiplier has the wrong sign beyond the margin. False (leave it to daqp) when
    a held multiplier is within the margin, or nothing would change."""
    n = x.shape[0]
    changed = False
    for i in range(n):
        held = side[i]
        if held == 0.0:
            if x[i] < lower[i]:
                side[i] = -1.0
                changed = True
            elif x[i] > upper[i]:
                side[i] = 1.0
                changed = True
            continue
        g = gradient[i]
        for j in range(n):
            g += hessian[i, j] * x[j]
        margin = MARGIN * tolerance * hessian[i, i]
        if held * g > margin:
            side[i] = 0.0
            changed = True
        elif not held * g < -margin:
            return False
    return changed


@njit(cache=True, nogil=True)
def record(
    x: np.ndarray, side: np.ndarray, bounds: int, lower: np.ndarray, upper: np.ndarray
) -> None:
    """The next guess: which bounds hold ``x`` (to ``AT_BOUND``, relative)."""
    for i in range(x.shape[0]):
        side[i] = 0.0
        if not bounds:
            continue
        if math.isfinite(lower[i]) and abs(x[i] - lower[i]) <= AT_BOUND * max(1.0, abs(lower[i])):
            side[i] = -1.0
        elif math.isfinite(upper[i]) and abs(x[i] - upper[i]) <= AT_BOUND * max(1.0, abs(upper[i])):
            side[i] = 1.0


@njit(cache=True, nogil=True)
def backoff(misses: int, rows: int) -> int:
    """Steps to skip the guess after ``misses`` failures in a row: 0, 1, 3, 7, then 15
    with ``rows`` inequality rows; none with bounds only (module docstring)."""
    if rows == 0:
        return 0
    return min(15, (1 << min(misses - 1, 4)) - 1)
