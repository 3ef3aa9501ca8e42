r"""The IK quadratic program and its dispatch to QP solvers.

.. math::

    \min_{\Delta q}\ \tfrac12 \Delta q^T H \Delta q + c^T \Delta q
    \quad \text{s.t.} \quad G \Delta q \le h,\quad A \Delta q = b,\quad l \le \Delta q \le u.

``daqp`` is called through its own API, with simple bounds passed natively; every
other solver name goes through ``qpsolvers`` with the bounds folded into ``G``. When
daqp fails, the same QP is solved again in square-root form (:mod:`posekit.ik.qp_sqrt`:
why the normal-equations Hessian can defeat daqp on a feasible problem, and how the
factored form avoids it); only when that fails too is :class:`NoSolutionFound` raised.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import daqp
import numpy as np
import qpsolvers

from posekit.ik.exceptions import InvalidSolverSettings, NoSolutionFound, SolverNotInstalled
from posekit.ik.limits.limit import Bounds, bounds_as_rows
from posekit.ik.qp_sqrt import HessianTerms, hessian_factor, solve_square_root

_DAQP_EQUALITY = 5
_DAQP_EXIT_MESSAGES = {
    -1: "primal infeasible",
    -2: "cycling detected",
    -3: "unbounded problem",
    -4: "iteration limit reached",
    -5: "non-convex problem",
    -6: "initial working set overdetermined",
}


def check_step_settings(dt: float, damping: float) -> None:
    """Raise :class:`InvalidSolverSettings` unless ``dt`` [s] > 0 and ``damping`` >= 0 are finite."""
    if not (isinstance(dt, (int, float)) and math.isfinite(dt) and dt > 0.0):
        raise InvalidSolverSettings(f"dt must be a finite number of seconds > 0, got {dt!r}")
    if not (isinstance(damping, (int, float)) and math.isfinite(damping) and damping >= 0.0):
        raise InvalidSolverSettings(f"damping must be a finite number >= 0, got {damping!r}")


@dataclass
class QuadraticProgram:
    """One IK step's QP over the configuration displacement :math:`\\Delta q` (shape ``(nv,)``)."""

    H: np.ndarray
    c: np.ndarray
    G: np.ndarray | None = None
    h: np.ndarray | None = None
    A: np.ndarray | None = None
    b: np.ndarray | None = None
    bounds: Bounds | None = None
    # What H was made of (HessianTerms), for the square-root re-solve; set by the
    # assembly as plain attributes, so the fast path pays no extra object per step.
    rows: np.ndarray | None = None
    shift: float | None = None
    diagonal_weights: Sequence[np.ndarray] = ()
    dense: Sequence[tuple[np.ndarray, np.ndarray]] = ()

    def to_problem(self) -> qpsolvers.Problem:
        """The same feasible set as a ``qpsolvers.Problem`` with finite rows only.

        Simple bounds become :math:`\\pm I` rows and rows with :math:`h = +\\infty`
        (inactive collision pairs) are dropped, so any backend accepts it.
        """
        blocks_G: list[np.ndarray] = []
        blocks_h: list[np.ndarray] = []
        if self.bounds is not None:
            rows = bounds_as_rows(self.bounds)
            if rows.G is not None and rows.h is not None:
                blocks_G.append(rows.G)
                blocks_h.append(rows.h)
        if self.G is not None and self.h is not None:
            finite = np.isfinite(self.h)
            blocks_G.append(self.G[finite])
            blocks_h.append(self.h[finite])
        G = np.vstack(blocks_G) if blocks_G else None
        h: np.ndarray | None = np.concatenate(blocks_h) if blocks_h else None
        if G is not None and G.shape[0] == 0:
            G = h = None
        return qpsolvers.Problem(self.H, self.c, G, h, self.A, self.b)

    def solve(self, solver: str, **kwargs: Any) -> np.ndarray:
        """Minimiser :math:`\\Delta q`; raises :class:`NoSolutionFound` when there is none."""
        if solver == "daqp":
            return self._solve_daqp(**kwargs)
        if solver not in qpsolvers.available_solvers:
            raise SolverNotInstalled(
                f"QP solver {solver!r} is not installed; available: {qpsolvers.available_solvers}"
            )
        solution = qpsolvers.solve_problem(self.to_problem(), solver=solver, **kwargs)
        if not solution.found or solution.x is None or not np.all(np.isfinite(solution.x)):
            raise NoSolutionFound(solver)
        return solution.x

    def _solve_daqp(self, **settings: object) -> np.ndarray:
        nv = self.H.shape[0]
        if self.G is None and self.A is None:  # only simple bounds, if any: nothing to stack
            constraint_matrix = _no_rows(nv)
            lower, upper = self.bounds if self.bounds is not None else (_EMPTY, _EMPTY)
            sense = _inequality_sense(upper.shape[0])
        else:
            constraint_matrix, upper, lower, sense = self._daqp_constraints(nv)
        x, _, exitflag, _ = daqp.solve(
            self.H, self.c, constraint_matrix, upper, lower, sense, **settings
        )
        if exitflag < 1 or not np.isfinite(x).all():
            return self._solve_daqp_square_root(exitflag, **settings)
        return x

    def _solve_daqp_square_root(self, first_exitflag: int, **settings: object) -> np.ndarray:
        """The square-root re-solve after daqp failed with ``first_exitflag``."""
        terms = (
            None
            if self.shift is None
            else HessianTerms(
                self.rows, self.shift, list(self.diagonal_weights), [h for h, _ in self.dense]
            )
        )
        R = None if terms is None else hessian_factor(terms, self.H.shape[0])
        if R is None:
            raise NoSolutionFound("daqp", _exit_message(first_exitflag))
        x, exitflag = solve_square_root(
            R,
            self.c,
            None if self.bounds is None else (self.bounds.lower, self.bounds.upper),
            None if self.G is None or self.h is None else (self.G, self.h),
            None if self.A is None or self.b is None else (self.A, self.b),
            **settings,
        )
        if exitflag < 1 or not np.isfinite(x).all():
            raise NoSolutionFound(
                "daqp",
                f"{_exit_message(first_exitflag)}; in square-root form: {_exit_message(exitflag)}",
            )
        return x

    def _daqp_constraints(self, nv: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """daqp's stacked ``(A, bupper, blower, sense)``: simple bounds first, then G, then A."""
        blocks = [m for m in (self.G, self.A) if m is not None]
        constraint_matrix = np.ascontiguousarray(
            np.vstack(blocks) if len(blocks) > 1 else blocks[0]
        )
        upper_parts, lower_parts = [], []
        if self.bounds is not None:
            upper_parts.append(self.bounds.upper)
            lower_parts.append(self.bounds.lower)
        if self.G is not None and self.h is not None:
            upper_parts.append(self.h)
            lower_parts.append(np.full(self.h.shape[0], -np.inf))
        if self.A is not None and self.b is not None:
            upper_parts.append(self.b)
            lower_parts.append(self.b)
        upper = np.concatenate(upper_parts)
        lower = np.concatenate(lower_parts)
        sense = np.zeros(upper.shape[0], dtype=np.intc)
        if self.A is not None:
            sense[upper.shape[0] - self.A.shape[0] :] = _DAQP_EQUALITY
        return constraint_matrix, upper, lower, sense


_EMPTY = np.zeros(0)


def _exit_message(exitflag: int) -> str:
    return _DAQP_EXIT_MESSAGES.get(exitflag, f"exit flag {exitflag}")


@functools.cache
def _no_rows(nv: int) -> np.ndarray:
    """An empty ``(0, nv)`` constraint matrix (shared, never written)."""
    return np.zeros((0, nv))


@functools.cache
def _inequality_sense(count: int) -> np.ndarray:
    """daqp's ``sense`` for ``count`` inequalities (shared, never written)."""
    return np.zeros(count, dtype=np.intc)
