r"""The feasible set of a compiled step, stacked as ``daqp.solve`` receives it, and the solve.

As :class:`~posekit.ik.qp.QuadraticProgram` with ``solver="daqp"``: the limits' simple
bounds are intersected in limit order (``np.maximum``/``np.minimum``) into
:math:`l \le \Delta q \le u`; their rows :math:`G \Delta q \le h` follow in limit order,
then the constraint tasks' rows :math:`A \Delta q = b` in task order. daqp receives

.. math:: \text{rows } [G; A], \quad b_u = [u; h; b], \quad b_l = [l; -\infty; b],
          \quad \text{sense} = [0 \dots 0; 0 \dots 0; 5 \dots 5],

without the bounds when no limit has any. Without equality rows, the QP is first solved
on the last step's active set and that answer taken when it is optimal
(:mod:`.active_set_guess`; daqp is not called then, and ``lam`` keeps daqp's last
multipliers). Adding a limit kind: its ``bounds`` and/or
``rows`` kernel, and one branch in :func:`limit_bounds` / :func:`limit_rows`.

QP area of ``work`` (``R`` = rows it has room for): matrix ``R × nv`` | rhs ``R`` |
``bupper`` ``nv + R`` | ``blower`` ``nv + R`` | ``lower`` ``nv`` | ``upper`` ``nv`` |
``x`` ``nv`` | ``lam`` ``nv + R``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from posekit.ik.compiled import active_set_guess as guess
from posekit.ik.compiled import daqp_call, limit_collision, limit_configuration, limit_velocity
from posekit.ik.compiled import header as h
from posekit.ik.compiled.native import counter, floats, int32s, int64s
from posekit.ik.compiled.objective_kernel import task_rows
from posekit.ik.compiled.views import work_matrix


def area_size(nv: int, capacity: int) -> int:
    """Doubles of the QP area for ``nv`` variables and room for ``capacity`` rows."""
    return 4 * capacity + 6 * nv + capacity * nv


def solution_offset(nv: int, capacity: int) -> int:
    """Where :math:`x` starts in the QP area."""
    return capacity * nv + 3 * capacity + 4 * nv


def area_addresses(
    start: int, nv: int, capacity: int, sense: int
) -> tuple[int, int, int, int, int]:
    """Addresses of the rows, ``bupper``, ``blower``, ``sense`` and ``lam`` of a QP area."""
    at = start + 8 * capacity * nv
    bupper = at + 8 * capacity
    blower = bupper + 8 * (capacity + nv)
    lam = blower + 8 * (capacity + nv) + 8 * 3 * nv
    return start, bupper, blower, sense, lam


class AreaViews(NamedTuple):
    """The QP area of ``work`` as NumPy views (Python side, for :meth:`Plan.last_qp`)."""

    rows: np.ndarray
    rhs: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


def area_views(area: np.ndarray, nv: int, capacity: int) -> AreaViews:
    """Views of the rows, right-hand sides and bounds in a QP area starting at ``area[0]``."""
    at = capacity * nv
    bounds = at + 3 * capacity + 2 * nv
    return AreaViews(
        area[:at].reshape(capacity, nv),
        area[at : at + capacity],
        area[bounds : bounds + nv],
        area[bounds + nv : bounds + 2 * nv],
    )


@njit(cache=True, nogil=True)
def limit_bounds(
    ints: np.ndarray,
    scalars: np.ndarray,
    record: int,
    lower: np.ndarray,
    upper: np.ndarray,
    merge: bool,
) -> bool:
    """The limit's simple bounds into ``lower``/``upper``; False when it has none."""
    kind = ints[record + h.R_KIND]
    if kind == h.L_CONFIGURATION:
        return limit_configuration.bounds(ints, scalars, record, lower, upper, merge)
    if kind == h.L_VELOCITY:
        return limit_velocity.velocity_bounds(ints, scalars, record, lower, upper, merge)
    if kind == h.L_FREE_JOINT_VELOCITY:
        return limit_velocity.free_joint_bounds(ints, scalars, record, lower, upper, merge)
    return False


@njit(cache=True, nogil=True)
def limit_rows(
    ints: np.ndarray, scalars: np.ndarray, work: np.ndarray, record: int, out: np.ndarray,
    rhs: np.ndarray, first: int,
) -> int:  # fmt: skip
    """The limit's rows from ``first``; returns how many."""
    kind = ints[record + h.R_KIND]
    if kind == h.L_CONFIGURATION:
        return limit_configuration.rows(ints, scalars, record, out, rhs, first)
    if kind == h.L_FREE_JOINT_VELOCITY:
        return limit_velocity.free_joint_rows(ints, scalars, record, out, rhs, first)
    if kind == h.L_COLLISION:
        return limit_collision.rows(ints, scalars, work, record, out, rhs, first)
    return 0


@njit(cache=True, nogil=True)
def _limits(
    ints: np.ndarray, scalars: np.ndarray, work: np.ndarray, out: np.ndarray, rhs: np.ndarray,
    lower: np.ndarray, upper: np.ndarray,
) -> tuple[bool, int]:  # fmt: skip
    """Bounds and rows of every limit; ``(any bounds, rows)``."""
    rows = counter()
    have_bounds = rows != 0
    for index in range(ints[h.H_NLIMITS]):
        record = ints[ints[h.H_LIMITS] + index]
        if limit_bounds(ints, scalars, record, lower, upper, have_bounds):
            have_bounds = True
        rows += limit_rows(ints, scalars, work, record, out, rhs, rows)
    return have_bounds, rows


@njit(cache=True, nogil=True)
def _constraints(
    ints: np.ndarray,
    scalars: np.ndarray,
    work: np.ndarray,
    out: np.ndarray,
    rhs: np.ndarray,
    first: int,
) -> int:
    """Rows :math:`J \\Delta q = -\\alpha e` of the constraint tasks from ``first``."""
    rows = first
    for index in range(ints[h.H_NCONSTRAINTS]):
        record = ints[ints[h.H_CONSTRAINTS] + index]
        written, _ = task_rows(ints, scalars, work, record, out, rhs, rows)
        rows += written
    return rows - first


@njit(cache=True, nogil=True)
def _guess(
    ints: np.ndarray, work: np.ndarray, x: np.ndarray, bounds: int, lower: np.ndarray,
    upper: np.ndarray, rows: np.ndarray, rhs: np.ndarray, inequalities: int,
) -> bool:  # fmt: skip
    """Solve on the guessed active set into ``x``, correcting it up to
    ``CORRECTIONS`` times; True when that is the QP's solution
    (:mod:`~posekit.ik.compiled.active_set_guess`), False leaves daqp to solve."""
    nv = ints[h.H_NV]
    start = ints[h.W_GUESS]
    factor = work_matrix(ints, start, nv, nv)
    side = work[start + nv * nv : start + nv * nv + nv]
    reduced = work[start + nv * nv + nv : start + nv * nv + 2 * nv]
    free = int64s(ints[h.H_FREE], nv)
    hessian = work_matrix(ints, ints[h.W_H], nv, nv)
    gradient = work[ints[h.W_C] : ints[h.W_C] + nv]
    primal_tol = floats(ints[h.H_DAQP] + daqp_call.SETTINGS, 1)[0]
    for attempt in range(guess.CORRECTIONS + 1):
        count = guess.hold(x, side, free, bounds, lower, upper)
        if count < 0 or (inequalities > 0 and count < nv):
            return False
        guess.reduce(hessian, gradient, x, free, count, factor, reduced)
        if not guess.cholesky(factor, count, reduced):
            return False
        guess.back_substitute(factor, reduced, count)
        for a in range(count):
            x[free[a]] = reduced[a]
        if guess.optimal(
            hessian, gradient, x, side, bounds, lower, upper, rows, rhs, inequalities, primal_tol
        ):
            return True
        if inequalities > 0 or not bounds or attempt == guess.CORRECTIONS:
            return False
        if not guess.correct(hessian, gradient, x, side, lower, upper, primal_tol):
            return False
    return False


@njit(cache=True, nogil=True)
def _solve_guessed(
    ints: np.ndarray, work: np.ndarray, x: np.ndarray, bounds: int, lower: np.ndarray,
    upper: np.ndarray, rows: np.ndarray, rhs: np.ndarray, inequalities: int,
) -> bool:  # fmt: skip
    """:func:`_guess`, unless skipped after failures (:func:`active_set_guess.backoff`)."""
    ints[h.H_GUESSED] = 0
    if ints[h.H_GUESS_SKIP] > 0:
        ints[h.H_GUESS_SKIP] -= 1
        return False
    if _guess(ints, work, x, bounds, lower, upper, rows, rhs, inequalities):
        ints[h.H_GUESSED] = 1
        ints[h.H_GUESS_MISSES] = 0
        return True
    ints[h.H_GUESS_MISSES] += 1
    ints[h.H_GUESS_SKIP] = guess.backoff(ints[h.H_GUESS_MISSES], inequalities)
    return False


@njit(cache=True, nogil=True)
def solve_qp(ints: np.ndarray, scalars: np.ndarray, work: np.ndarray) -> np.ndarray:
    """Stack the feasible set, solve (on the guessed active set when that is optimal, else
    with daqp); return :math:`x = \\Delta q` (a view)."""
    nv = ints[h.H_NV]
    capacity = ints[h.W_QP_ROWS]
    start = ints[h.W_QP]
    out = work_matrix(ints, start, capacity, nv)
    at = start + capacity * nv
    rhs = work[at : at + capacity]
    bupper = work[at + capacity : at + 2 * capacity + nv]
    blower = work[at + 2 * capacity + nv : at + 3 * capacity + 2 * nv]
    lower = work[at + 3 * capacity + 2 * nv : at + 3 * capacity + 3 * nv]
    upper = work[at + 3 * capacity + 3 * nv : at + 3 * capacity + 4 * nv]
    x = work[at + 3 * capacity + 4 * nv : at + 3 * capacity + 5 * nv]
    lam = work[at + 3 * capacity + 5 * nv : at + 4 * capacity + 6 * nv]
    have_bounds, inequalities = _limits(ints, scalars, work, out, rhs, lower, upper)
    equalities = _constraints(ints, scalars, work, out, rhs, inequalities)
    bounds = nv if have_bounds else 0
    for i in range(bounds):
        bupper[i] = upper[i]
        blower[i] = lower[i]
    sense = int32s(ints[h.H_SENSE], nv + capacity)
    for i in range(inequalities + equalities):
        bupper[bounds + i] = rhs[i]
        blower[bounds + i] = -np.inf if i < inequalities else rhs[i]
        sense[bounds + i] = 0 if i < inequalities else h.DAQP_EQUALITY
    sense[:bounds] = 0
    ints[h.H_ROWS_G] = inequalities
    ints[h.H_ROWS_A] = equalities
    ints[h.H_HAVE_BOUNDS] = bounds
    if equalities == 0 and _solve_guessed(
        ints, work, x, bounds, lower, upper, out, rhs, inequalities
    ):
        ints[h.H_STATUS] = h.DAQP_OPTIMAL
        return x
    vectors = (bupper.ctypes.data, blower.ctypes.data, sense.ctypes.data, lam.ctypes.data)
    ints[h.H_STATUS] = daqp_call.solve(
        ints, bounds, inequalities + equalities, out.ctypes.data, vectors
    )
    if equalities == 0:
        side_at = ints[h.W_GUESS] + nv * nv
        guess.record(x, work[side_at : side_at + nv], bounds, lower, upper)
    return x
