r"""Task base classes.

A task with error :math:`e(q) \in \mathbb{R}^k`, Jacobian :math:`J(q) = \partial e / \partial q`,
cost vector :math:`w \in \mathbb{R}^k_{\ge 0}`, gain :math:`\alpha \in [0, 1]` and
Levenberg-Marquardt damping :math:`\lambda \ge 0` asks the step :math:`\Delta q` to follow
the first-order task dynamics :math:`J \Delta q = -\alpha e` in the least-squares sense.
Its weighted residual is

.. math::

    W = \mathrm{diag}(w) J, \qquad e_w = -\alpha\,\mathrm{diag}(w)\, e, \qquad
    \mu = \lambda \|e_w\|^2,

and its QP objective :math:`\tfrac12 \Delta q^T H \Delta q + c^T \Delta q` has
:math:`H = W^T W + \mu I` and :math:`c = -W^T e_w`.
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from posekit.ik.observed import Observed
from posekit.ik.tasks.validation import check_gain, check_lm_damping

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration

Residual = tuple[np.ndarray, np.ndarray, float]


class Objective(NamedTuple):
    r"""Quadratic objective :math:`\tfrac12 \Delta q^T H \Delta q + c^T \Delta q`.

    ``H`` has shape ``(nv, nv)`` and ``c`` shape ``(nv,)``.
    """

    H: np.ndarray
    c: np.ndarray

    def value(self, x: np.ndarray) -> float:
        r"""The objective's value :math:`x^T H x + c^T x` (no ½, as upstream documents it)."""
        return float(x @ self.H @ x + self.c @ x)


class BaseTask(Observed, abc.ABC):
    """Anything that contributes a quadratic objective to the IK problem.

    Assigning a public attribute notifies the compiled plans that use the task
    (:class:`posekit.ik.observed.Observed`).
    """

    @abc.abstractmethod
    def compute_qp_objective(self, configuration: Configuration) -> Objective:
        r"""The pair :math:`(H(q), c(q))` of this task's QP objective."""

    def compute_qp_residual(self, configuration: Configuration) -> Residual | None:
        r"""The triple ``(weighted_jacobian, weighted_error, mu)`` when :math:`H = W^T W + \mu I`.

        The solver stacks every task's :math:`W` and :math:`e_w` into one least-squares
        residual. ``None`` (the default) means the task has no such form; its
        :meth:`compute_qp_objective` is added densely instead.
        """
        return None


class Task(BaseTask):
    r"""A kinematic task defined by an error :math:`e(q)` and its Jacobian :math:`J(q)`.

    Args:
        cost: Weights :math:`w` of the error coordinates, shape ``(k,)``; units are
            [cost] per unit of error.
        gain: Task gain :math:`\alpha \in [0, 1]`; 1 is dead-beat, lower values filter.
        lm_damping: Levenberg-Marquardt damping :math:`\lambda \ge 0`, scaling the
            squared weighted error added to the Hessian diagonal.
    """

    def __init__(self, cost: np.ndarray, gain: float = 1.0, lm_damping: float = 0.0) -> None:
        self.cost = np.asarray(cost, dtype=np.float64)
        self.gain = check_gain(gain)
        self.lm_damping = check_lm_damping(lm_damping)

    def set_gain(self, gain: float) -> None:
        r"""Set the task gain :math:`\alpha \in [0, 1]`."""
        self.gain = check_gain(gain)

    def set_lm_damping(self, lm_damping: float) -> None:
        r"""Set the Levenberg-Marquardt damping :math:`\lambda \ge 0`."""
        self.lm_damping = check_lm_damping(lm_damping)

    @abc.abstractmethod
    def compute_error(self, configuration: Configuration) -> np.ndarray:
        """Task error :math:`e(q)`, shape ``(k,)``."""

    @abc.abstractmethod
    def compute_jacobian(self, configuration: Configuration) -> np.ndarray:
        r"""Task Jacobian :math:`J(q) = \partial e / \partial q`, shape ``(k, nv)``."""

    def weighted_residual(self, error: np.ndarray, jacobian: np.ndarray) -> Residual:
        r""":math:`(\mathrm{diag}(w) J,\; -\alpha\,\mathrm{diag}(w) e,\; \lambda \|e_w\|^2)`."""
        cost = self.cost
        weighted_error = (-self.gain) * cost * error
        weighted_jacobian = cost[:, None] * jacobian
        mu = self.lm_damping * float(weighted_error @ weighted_error)
        return weighted_jacobian, weighted_error, mu

    def compute_qp_residual(self, configuration: Configuration) -> Residual:
        """Weighted residual from :meth:`compute_error` and :meth:`compute_jacobian`."""
        return self.weighted_residual(
            self.compute_error(configuration), self.compute_jacobian(configuration)
        )

    def compute_qp_objective(self, configuration: Configuration) -> Objective:
        r""":math:`H = W^T W + \mu I`, :math:`c = -W^T e_w` from the weighted residual."""
        return objective_from_residual(*self.compute_qp_residual(configuration))

    def compute_constraint_rows(
        self, configuration: Configuration
    ) -> tuple[np.ndarray, np.ndarray]:
        r"""Rows :math:`(J, -\alpha e)` of the hard equality :math:`J \Delta q = -\alpha e`."""
        return self.compute_jacobian(configuration), (-self.gain) * self.compute_error(
            configuration
        )


def objective_from_residual(
    weighted_jacobian: np.ndarray, weighted_error: np.ndarray, mu: float
) -> Objective:
    r"""Dense objective :math:`(W^T W + \mu I, -W^T e_w)` of a weighted residual."""
    hessian = weighted_jacobian.T @ weighted_jacobian
    if mu:
        hessian[np.diag_indices_from(hessian)] += mu
    return Objective(hessian, -(weighted_jacobian.T @ weighted_error))
