r"""Damping task: L2 regularisation of the joint displacement."""

from __future__ import annotations

from typing import TYPE_CHECKING

import mujoco
import numpy as np

from posekit.ik.tasks.posture_task import PostureTask
from posekit.ik.tasks.task import Residual

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration


class DampingTask(PostureTask):
    r"""Favour small displacements: :math:`\tfrac12 \Delta q^T \Lambda^2 \Delta q`.

    With :math:`\Lambda = \mathrm{diag}(\lambda)` (the cost, one value per DoF or a
    scalar), the error is :math:`e = 0` and :math:`J = I_{n_v}` with zero rows on
    free-joint DoFs, so the floating base is never damped. Units: [cost]/[rad] or
    [cost]/[m].

    It is a :class:`PostureTask` with gain 0 and no Levenberg-Marquardt term (as
    upstream): a target posture may be set but never changes the objective.
    """

    def __init__(self, model: mujoco.MjModel, cost: object) -> None:
        super().__init__(model, cost, gain=0.0, lm_damping=0.0)
        self._zero_error = np.zeros(model.nv)
        self._zero_error.setflags(write=False)  # shared by every step's residual

    def compute_error(self, configuration: Configuration) -> np.ndarray:
        """Zero vector of shape ``(nv,)``: the desired displacement is zero."""
        return np.zeros(self.model.nv)

    def compute_qp_residual(self, configuration: Configuration) -> Residual:
        r"""Constant residual :math:`(\Lambda, 0, 0)`."""
        return self._weighted_jacobian, np.zeros(self.model.nv), 0.0

    def diagonal_residual(self, configuration: Configuration) -> Residual:
        r"""The residual with :math:`\Lambda` given by its diagonal :math:`\lambda`."""
        return self._weights, self._zero_error, 0.0
