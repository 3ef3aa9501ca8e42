r"""Differential IK: fuse tasks and limits into one QP and solve it.

All tasks with a residual form are stacked into one weighted residual
:math:`W = [W_1; \dots; W_n]`, :math:`E = [e_{w,1}; \dots; e_{w,n}]`, so the objective is

.. math:: H = W^T W + \Big(\delta + \sum_i \mu_i\Big) I + \sum_j H_j, \qquad c = -W^T E + \sum_j c_j,

with :math:`\delta` the global ``damping``, :math:`\mu_i` the tasks' Levenberg-Marquardt
terms and :math:`(H_j, c_j)` the dense objectives of tasks without residual form.
Tasks whose weighted Jacobian is diagonal (posture, damping) expose
``diagonal_residual`` (the diagonal :math:`w` instead of :math:`\mathrm{diag}(w)`): they
add :math:`w^2` to the diagonal of :math:`H` and :math:`-w \odot e_w` to :math:`c`, the
same numbers without :math:`n_v` extra rows in :math:`W`.
Limits contribute :math:`G \Delta q \le h` (or simple bounds), and tasks passed as
``constraints`` the equalities :math:`J \Delta q = -\alpha e`. The solution
:math:`\Delta q` is returned as the velocity :math:`v = \Delta q / \Delta t`.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

import numpy as np
import qpsolvers

from posekit.ik.compiled.engine import solve_compiled
from posekit.ik.configuration import Configuration
from posekit.ik.limits.configuration_limit import ConfigurationLimit
from posekit.ik.limits.limit import Bounds, Limit
from posekit.ik.qp import QuadraticProgram, check_step_settings
from posekit.ik.tasks.task import BaseTask, Task

_DEFAULT_LIMITS: weakref.WeakKeyDictionary[Configuration, list[Limit]] = weakref.WeakKeyDictionary()


def default_limits(configuration: Configuration) -> list[Limit]:
    """``[ConfigurationLimit(model)]``, built once per configuration."""
    cached = _DEFAULT_LIMITS.get(configuration)
    if cached is None:
        cached = _DEFAULT_LIMITS[configuration] = [ConfigurationLimit(configuration.model)]
    return cached


def assemble_qp(
    configuration: Configuration,
    tasks: Sequence[BaseTask],
    dt: float,
    damping: float = 1e-12,
    limits: Sequence[Limit] | None = None,
    constraints: Sequence[Task] | None = None,
) -> QuadraticProgram:
    """The QP of one IK step (see the module docstring)."""
    check_step_settings(dt, damping)
    nv = configuration.model.nv
    jacobians: list[np.ndarray] = []
    errors: list[np.ndarray] = []
    diagonal_weights: list[np.ndarray] = []
    diagonal_errors: list[np.ndarray] = []
    shift = damping
    dense = []
    for task in tasks:
        diagonal = getattr(task, "diagonal_residual", None)
        if diagonal is not None:
            weights, weighted_error, mu = diagonal(configuration)
            diagonal_weights.append(weights)
            diagonal_errors.append(weighted_error)
            shift += mu
            continue
        residual = task.compute_qp_residual(configuration)
        if residual is None:
            dense.append(task.compute_qp_objective(configuration))
            continue
        weighted_jacobian, weighted_error, mu = residual
        jacobians.append(weighted_jacobian)
        errors.append(weighted_error)
        shift += mu
    W: np.ndarray | None = None
    if jacobians:
        W = jacobians[0] if len(jacobians) == 1 else np.concatenate(jacobians)
        E = errors[0] if len(errors) == 1 else np.concatenate(errors)
        H = W.T @ W
        c = W.T @ E
        c *= -1.0
    else:
        H = np.zeros((nv, nv))
        c = np.zeros(nv)
    diagonal_of_H = H.reshape(-1)[:: nv + 1]  # a view: writes go into H
    for weights, weighted_error in zip(diagonal_weights, diagonal_errors, strict=True):
        diagonal_of_H += weights * weights
        c -= weights * weighted_error
    for objective in dense:
        H += objective.H
        c += objective.c
    diagonal_of_H += shift

    qp = QuadraticProgram(H, c)
    qp.rows, qp.shift, qp.diagonal_weights, qp.dense = W, shift, diagonal_weights, dense
    _add_limits(qp, configuration, dt, default_limits(configuration) if limits is None else limits)
    if constraints:
        rows = [_equality_rows(task, configuration) for task in constraints]
        qp.A = np.vstack([jacobian for jacobian, _ in rows])
        qp.b = np.concatenate([target for _, target in rows])
    return qp


def _add_limits(
    qp: QuadraticProgram, configuration: Configuration, dt: float, limits: Sequence[Limit]
) -> None:
    merged: Bounds | None = None
    G_blocks: list[np.ndarray] = []
    h_blocks: list[np.ndarray] = []
    for limit in limits:
        bounds, rows = limit.compute_qp_bounds_and_rows(configuration, dt)
        if bounds is not None:
            merged = (
                bounds
                if merged is None
                else Bounds(
                    np.maximum(merged.lower, bounds.lower), np.minimum(merged.upper, bounds.upper)
                )
            )
        if rows.G is not None and rows.h is not None:
            G_blocks.append(rows.G)
            h_blocks.append(rows.h)
    qp.bounds = merged
    if G_blocks:
        qp.G = G_blocks[0] if len(G_blocks) == 1 else np.vstack(G_blocks)
        qp.h = h_blocks[0] if len(h_blocks) == 1 else np.concatenate(h_blocks)


def _equality_rows(task: Task, configuration: Configuration) -> tuple[np.ndarray, np.ndarray]:
    r"""Rows :math:`(J, -\alpha e)` of a task used as a hard constraint."""
    if hasattr(task, "compute_constraint_rows"):
        return task.compute_constraint_rows(configuration)
    return task.compute_jacobian(configuration), -task.gain * task.compute_error(configuration)


def build_ik(
    configuration: Configuration,
    tasks: Sequence[BaseTask],
    dt: float,
    damping: float = 1e-12,
    limits: Sequence[Limit] | None = None,
    constraints: Sequence[Task] | None = None,
) -> qpsolvers.Problem:
    """The IK step as a ``qpsolvers.Problem`` over :math:`\\Delta q`.

    ``limits=None`` means ``[ConfigurationLimit(model)]``; ``limits=[]`` means none.
    Simple bounds appear as rows of ``G`` and inactive rows (:math:`h = +\\infty`) are
    left out, so every ``qpsolvers`` backend accepts the problem.
    """
    return assemble_qp(configuration, tasks, dt, damping, limits, constraints).to_problem()


def solve_ik(
    configuration: Configuration,
    tasks: Sequence[BaseTask],
    dt: float,
    solver: str,
    damping: float = 1e-12,
    safety_break: bool = False,
    limits: Sequence[Limit] | None = None,
    constraints: Sequence[Task] | None = None,
    **kwargs: object,
) -> np.ndarray:
    """Solve one differential IK step; returns the velocity :math:`v = \\Delta q / \\Delta t`.

    Args:
        configuration: Robot configuration (forward kinematics up to date).
        tasks: Tasks whose weighted errors are minimised.
        dt: Integration timestep in [s].
        solver: ``"daqp"`` (fast path) or any installed ``qpsolvers`` backend name.
        damping: Uniform Levenberg-Marquardt damping added to the Hessian diagonal.
        safety_break: Raise :class:`NotWithinConfigurationLimits` when the current
            configuration is already outside its limits.
        limits: Limits; ``None`` means ``[ConfigurationLimit(model)]``, ``[]`` none.
        constraints: Tasks enforced exactly as :math:`J \\Delta q = -\\alpha e`.
        kwargs: Settings passed to the solver.

    Raises:
        NoSolutionFound: the QP is infeasible or the solver failed.
    """
    if safety_break:
        configuration.check_limits(safety_break=True)
    if type(tasks) is not list and type(tasks) is not tuple:
        tasks = list(tasks)  # iterated once: the compiled and the Python path both read it
    if limits is None:
        limits = default_limits(configuration)
    elif type(limits) is not list and type(limits) is not tuple:
        limits = list(limits)
    if constraints is not None and type(constraints) is not list:
        constraints = list(constraints)
    velocity = solve_compiled(
        configuration, tasks, dt, solver, damping, limits, constraints, kwargs
    )
    if velocity is not None:
        return velocity
    return solve_python(configuration, tasks, dt, solver, damping, limits, constraints, **kwargs)


def solve_python(
    configuration: Configuration,
    tasks: Sequence[BaseTask],
    dt: float,
    solver: str,
    damping: float,
    limits: Sequence[Limit],
    constraints: Sequence[Task] | None,
    **kwargs: object,
) -> np.ndarray:
    """``solve_ik``'s Python path (the reference implementation): the QP assembled by
    :func:`assemble_qp`, solved by ``solver``; the velocity :math:`\\Delta q / \\Delta t`.

    Raises:
        NoSolutionFound: the QP is infeasible or the solver failed.
    """
    qp = assemble_qp(configuration, tasks, dt, damping, limits, constraints)
    return qp.solve(solver, **kwargs) / dt
