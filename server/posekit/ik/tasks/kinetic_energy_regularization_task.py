r"""Kinetic-energy regularisation: penalise the kinetic energy of the step."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from posekit.ik.exceptions import IntegrationTimestepNotSet, TaskDefinitionError
from posekit.ik.tasks.task import BaseTask, Objective

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration


class KineticEnergyRegularizationTask(BaseTask):
    r"""Penalise :math:`\tfrac12 \lambda\, \Delta q^T \frac{M(q)}{\Delta t^2} \Delta q`.

    :math:`M(q)` is the joint-space inertia matrix, :math:`\lambda \ge 0` the cost and
    :math:`\Delta t` [s] the timestep set by :meth:`set_dt`, so that
    :math:`\Delta q / \Delta t` is a velocity and the term is an energy in [J] per unit
    cost. Its Hessian is dense (:math:`H = \lambda M / \Delta t^2`, :math:`c = 0`), so
    it has no residual form.
    """

    def __init__(self, cost: float) -> None:
        self.cost = 0.0
        self.dt: float | None = None
        self.set_cost(cost)

    def set_cost(self, cost: float) -> None:
        r"""Set :math:`\lambda`, a finite scalar >= 0."""
        self.cost = _non_negative_scalar(cost, f"{type(self).__name__} cost")

    def set_dt(self, dt: float) -> None:
        """Set the integration timestep [s], a finite number > 0."""
        value = _non_negative_scalar(dt, "dt")
        if value == 0.0:
            raise TaskDefinitionError(f"dt must be > 0, got {dt!r}")
        self.dt = value

    @property
    def inv_dt_sq(self) -> float | None:
        r""":math:`1 / \Delta t^2` in [1/s²], or ``None`` until :meth:`set_dt` is called."""
        return None if self.dt is None else 1.0 / (self.dt * self.dt)

    def compute_qp_objective(self, configuration: Configuration) -> Objective:
        r""":math:`H = \lambda M(q) / \Delta t^2`, :math:`c = 0`."""
        if self.dt is None:
            raise IntegrationTimestepNotSet(type(self).__name__)
        hessian = configuration.get_inertia_matrix()
        hessian *= self.cost / (self.dt * self.dt)
        return Objective(hessian, np.zeros(configuration.model.nv))


def _non_negative_scalar(value: object, what: str) -> float:
    if isinstance(value, bool):
        raise TaskDefinitionError(f"{what} must be a number, got {value!r}")
    try:
        array = np.asarray(value, dtype=np.float64)
        number = float(array.reshape(-1)[0]) if array.size == 1 else math.nan
    except (TypeError, ValueError):
        raise TaskDefinitionError(f"{what} must be a number, got {value!r}") from None
    if not math.isfinite(number) or number < 0.0:
        raise TaskDefinitionError(f"{what} should be >= 0 (a finite number), got {value!r}")
    return number
