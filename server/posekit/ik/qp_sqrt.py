r"""The IK QP in square-root form: the re-solve used when daqp fails on the normal equations.

**Why daqp can fail on a feasible IK QP.** The objective's Hessian is formed as the
normal equations :math:`H = W^T W + D + \sum_j H_j` (stacked weighted task Jacobians
:math:`W`, a diagonal :math:`D` holding the global damping :math:`\delta`, the tasks'
Levenberg-Marquardt terms and the posture/damping weights, dense terms :math:`H_j`).
On the DoFs no task weighs — a floating base chased by one frame task has 37 of 43 on
Unitree G1 — the only curvature is :math:`\delta = 10^{-12}`. Forming :math:`W^T W` in
floating point makes errors of order :math:`\varepsilon \lVert W \rVert^2`; a far
target inflates :math:`\lVert W \rVert` (the frame task's :math:`J_{\log}` has a block
proportional to the distance), so at 10 m :math:`\lVert W \rVert^2 \approx 200` gives a
computed :math:`H` with condition number ~:math:`10^{14}`, and at 100 m
(:math:`\lVert W \rVert^2 \approx 2 \cdot 10^4`) one with a *negative* eigenvalue
(:math:`-2.7 \cdot 10^{-12}`). daqp is a dual active-set method built on the Cholesky
factor of :math:`H`; with such a factor its iterations stall ("iteration limit reached")
although :math:`\Delta q = 0` is feasible. mink passes the same :math:`H` to daqp and
fails the same way on other steps: which steps fail depends on the last bits of
:math:`H`. Simple bounds versus rows changes nothing (qpsolvers' all-rows call fails on
the same QPs), and no daqp setting fixes it reliably (on two failing G1 steps:
``eps_prox`` 1e-8…1e-4 solves one and not the other, ``iter_limit`` 100 000 returns an
objective 2e-4 above the optimum, tolerances and ``pivot_tol`` do not help).

**The square-root form** never forms :math:`W^T W`. The QR factorisation of the stacked
residual

.. math:: F = \begin{bmatrix} W \\ D^{1/2} \\ L_j^T \end{bmatrix} = Q R,
   \qquad F^T F = W^T W + D + \sum_j L_j L_j^T = H = R^T R,

(:math:`H_j = L_j L_j^T`) gives the Cholesky factor :math:`R` with condition number
:math:`\sqrt{\kappa(H)}` (~:math:`10^7` instead of ~:math:`10^{14}`). With
:math:`y = R\,\Delta q` the QP becomes

.. math::

    \min_y\ \tfrac12 \lVert y \rVert^2 + (R^{-T} c)^T y \quad \text{s.t.}\quad
    l \le R^{-1} y \le u,\quad G R^{-1} y \le h,\quad A R^{-1} y = b,

whose Hessian is the identity; daqp solves it in a few iterations and
:math:`\Delta q = R^{-1} y`. Simple bounds become rows here (:math:`R^{-1}` mixes the
coordinates). It is the same QP, so it is used only when the fast call fails: results
where daqp succeeds are untouched.
"""

from __future__ import annotations

from typing import NamedTuple

import daqp
import numpy as np

_DAQP_EQUALITY = 5


class HessianTerms(NamedTuple):
    r"""What :math:`H = W^T W + \mathrm{diag}(d) + \sum_j H_j` was made of.

    ``rows`` is :math:`W` (or ``None``), ``shift`` the scalar part of :math:`d` (global
    damping and Levenberg-Marquardt terms), ``diagonal_weights`` the diagonal tasks'
    weights :math:`w` (each adds :math:`w^2` to :math:`d`), ``dense`` the :math:`H_j`.
    """

    rows: np.ndarray | None
    shift: float
    diagonal_weights: list[np.ndarray]
    dense: list[np.ndarray]


def hessian_factor(terms: HessianTerms, nv: int) -> np.ndarray | None:
    r"""Upper-triangular :math:`R` with :math:`R^T R = H`, from the QR of the stacked residual.

    ``None`` when :math:`H` is singular (a DoF without any weight and no damping).
    """
    diagonal = np.full(nv, terms.shift)
    for weights in terms.diagonal_weights:
        diagonal += weights * weights
    blocks = [] if terms.rows is None else [terms.rows]
    blocks.append(np.diag(np.sqrt(np.maximum(diagonal, 0.0))))
    for dense in terms.dense:
        values, vectors = np.linalg.eigh(0.5 * (dense + dense.T))
        blocks.append(np.sqrt(np.maximum(values, 0.0))[:, None] * vectors.T)
    R: np.ndarray = np.linalg.qr(np.vstack(blocks), mode="r")  # type: ignore[assignment]
    pivots = np.abs(np.diag(R))
    if pivots.size < nv or not np.all(np.isfinite(R)) or pivots.min() <= 0.0:
        return None
    return R


def solve_square_root(
    R: np.ndarray,
    c: np.ndarray,
    bounds: tuple[np.ndarray, np.ndarray] | None,
    inequalities: tuple[np.ndarray, np.ndarray] | None,
    equalities: tuple[np.ndarray, np.ndarray] | None,
    **settings: object,
) -> tuple[np.ndarray, int]:
    r"""Solve the QP in :math:`y = R \Delta q` (module docstring); returns :math:`(\Delta q, \text{exitflag})`.

    Args:
        R: Upper-triangular factor of :math:`H`, shape ``(nv, nv)``.
        c: Linear term, shape ``(nv,)``.
        bounds: ``(l, u)`` of shape ``(nv,)`` each, :math:`\pm\infty` where free, or ``None``.
        inequalities: ``(G, h)``, or ``None``; rows with :math:`h = +\infty` are dropped.
        equalities: ``(A, b)``, or ``None``.
        settings: daqp settings.
    """
    nv = R.shape[0]
    R_inv = np.linalg.solve(R, np.eye(nv))
    rows: list[np.ndarray] = []
    upper: list[np.ndarray] = []
    lower: list[np.ndarray] = []
    if bounds is not None:
        finite = np.isfinite(bounds[0]) | np.isfinite(bounds[1])
        rows.append(R_inv[finite])
        lower.append(bounds[0][finite])
        upper.append(bounds[1][finite])
    if inequalities is not None:
        finite = np.isfinite(inequalities[1])
        rows.append(inequalities[0][finite] @ R_inv)
        upper.append(inequalities[1][finite])
        lower.append(np.full(int(finite.sum()), -np.inf))
    equality_count = 0
    if equalities is not None:
        rows.append(equalities[0] @ R_inv)
        upper.append(equalities[1])
        lower.append(equalities[1])
        equality_count = equalities[1].shape[0]
    matrix = np.ascontiguousarray(np.vstack(rows)) if rows else np.zeros((0, nv))
    upper_all = np.concatenate(upper) if upper else np.zeros(0)
    lower_all = np.concatenate(lower) if lower else np.zeros(0)
    sense = np.zeros(upper_all.shape[0], dtype=np.intc)
    if equality_count:
        sense[-equality_count:] = _DAQP_EQUALITY
    y, _, exitflag, _ = daqp.solve(
        np.eye(nv), R_inv.T @ c, matrix, upper_all, lower_all, sense, **settings
    )
    return R_inv @ y, int(exitflag)
