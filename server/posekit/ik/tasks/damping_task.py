r"""Damping task: L2 regularisation of the joint displacement."""

from __future__ import annotations

from typing import TYPE_CHECKING

import mujoco
import numpy as np

from posekit.ik.tasks.task import Residual, Task
from posekit.ik.tasks.validation import cost_vector
from posekit.ik.utils import get_freejoint_dims

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration


class DampingTask(Task):
    r"""Favour small displacements: :math:`\tfrac12 \Delta q^T \Lambda^2 \Delta q`.

    With :math:`\Lambda = \mathrm{diag}(\lambda)` (the cost, one value per DoF or a
    scalar), the error is :math:`e = 0` and :math:`J = I_{n_v}` with zero rows on
    free-joint DoFs, so the floating base is never damped. Units: [cost]/[rad] or
    [cost]/[m].
    """

    def __init__(self, model: mujoco.MjModel, cost: object) -> None:
        super().__init__(cost=np.zeros(model.nv), gain=0.0, lm_damping=0.0)
        self.model = model
        self.k = model.nv
        _, free_dofs = get_freejoint_dims(model)
        self._controlled = np.ones(model.nv)
        self._controlled[free_dofs] = 0.0
        self.set_cost(cost)

    def set_cost(self, cost: object) -> None:
        """Set :math:`\\lambda`: a scalar, or a vector of shape ``(nv,)``."""
        self.cost = cost_vector(cost, self.model.nv, "cost") * self._controlled
        self._weighted_jacobian = np.diag(self.cost)

    def compute_error(self, configuration: Configuration) -> np.ndarray:
        """Zero vector of shape ``(nv,)``: the desired displacement is zero."""
        return np.zeros(self.model.nv)

    def compute_jacobian(self, configuration: Configuration) -> np.ndarray:
        """Identity with zero rows on free-joint DoFs, shape ``(nv, nv)``."""
        return np.diag(self._controlled)

    def compute_qp_residual(self, configuration: Configuration) -> Residual:
        r"""Constant residual :math:`(\Lambda, 0, 0)`."""
        return self._weighted_jacobian, np.zeros(self.model.nv), 0.0

    def diagonal_residual(self, configuration: Configuration) -> Residual:
        r"""The residual with :math:`\Lambda` given by its diagonal :math:`\lambda`."""
        return self.cost, np.zeros(self.model.nv), 0.0
