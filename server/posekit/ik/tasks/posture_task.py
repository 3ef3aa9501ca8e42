r"""Posture task: regulate joint coordinates toward a target configuration."""

from __future__ import annotations

from typing import TYPE_CHECKING

import mujoco
import numpy as np

from posekit.ik.exceptions import TargetNotSet
from posekit.ik.tasks.task import Residual, Task
from posekit.ik.tasks.validation import DOF_COST_SHAPE, cost_vector, target_vector
from posekit.ik.utils import get_freejoint_dims

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration


class PostureTask(Task):
    r"""Regulate joint angles toward a target posture :math:`q^*`.

    .. math:: e(q) = q \ominus q^* \in \mathbb{R}^{n_v}, \qquad J(q) = I_{n_v},

    where :math:`\ominus` is ``mj_differentiatePos`` (quaternion joints differ on SO(3)).
    Floating-base (free-joint) coordinates are left alone: their error and Jacobian rows
    are zero. Costs are in [cost]/[rad] or [cost]/[m], one per degree of freedom or a
    scalar for all.
    """

    def __init__(
        self, model: mujoco.MjModel, cost: object, gain: float = 1.0, lm_damping: float = 0.0
    ) -> None:
        super().__init__(cost=np.zeros(model.nv), gain=gain, lm_damping=lm_damping)
        self.model = model
        self.k = model.nv
        self.nq = model.nq
        self._target_q = np.zeros(model.nq)  # q*, written in place
        self._has_target = False
        _, free_dofs = get_freejoint_dims(model)
        self._controlled = np.ones(model.nv, dtype=bool)
        self._controlled[free_dofs] = False
        self._controlled_float = self._controlled.astype(np.float64)
        self._error = np.zeros(model.nv)
        self.set_cost(cost)

    def set_cost(self, cost: object) -> None:
        """Set the cost: a scalar, or a vector of shape ``(nv,)``."""
        self.cost = cost_vector(
            cost, self.model.nv, f"{type(self).__name__} cost", DOF_COST_SHAPE, "should"
        )
        self._weights = self.cost * self._controlled
        self._weighted_jacobian = np.diag(self._weights)

    @property
    def weights(self) -> np.ndarray:
        """The diagonal of :math:`W`: the cost on controlled DoFs, 0 on free-joint DoFs."""
        return self._weights

    @property
    def target_q(self) -> np.ndarray | None:
        """Target posture :math:`q^*`, shape ``(nq,)``, or ``None`` until set."""
        return self._target_q if self._has_target else None

    @target_q.setter
    def target_q(self, target_q: object) -> None:
        self.set_target(target_q)

    def set_target(self, target_q: object) -> None:
        """Set the target posture :math:`q^*`, shape ``(nq,)``."""
        self._target_q[:] = target_vector(target_q, self.model.nq, "target posture")
        if not self._has_target:
            self._has_target = True

    def set_target_from_configuration(self, configuration: Configuration) -> None:
        """Set the target posture to the current configuration."""
        self.set_target(configuration.q)

    def compute_error(self, configuration: Configuration) -> np.ndarray:
        r""":math:`q \ominus q^*` with zeros on free-joint coordinates, shape ``(nv,)``."""
        if not self._has_target:
            raise TargetNotSet(type(self).__name__)
        error = np.empty(self.model.nv)
        mujoco.mj_differentiatePos(self.model, error, 1.0, self._target_q, configuration.data.qpos)
        error *= self._controlled_float
        return error

    def compute_jacobian(self, configuration: Configuration) -> np.ndarray:
        """The identity with zero rows on free-joint coordinates, shape ``(nv, nv)``."""
        return np.diag(self._controlled.astype(np.float64))

    def compute_qp_residual(self, configuration: Configuration) -> Residual:
        r"""Weighted residual with the constant :math:`W = \mathrm{diag}(w)` reused."""
        _, weighted_error, mu = self.diagonal_residual(configuration)
        return self._weighted_jacobian, weighted_error, mu

    def diagonal_residual(self, configuration: Configuration) -> Residual:
        r"""The residual with :math:`W = \mathrm{diag}(w)` given by its diagonal :math:`w`.

        :math:`w` is zero on free-joint DoFs, so the error needs no masking here.
        """
        if self.target_q is None:
            raise TargetNotSet(type(self).__name__)
        weighted_error = np.empty(self.model.nv)
        mujoco.mj_differentiatePos(
            self.model, weighted_error, 1.0, self.target_q, configuration.data.qpos
        )
        weighted_error *= self._weights
        weighted_error *= -self.gain
        mu = self.lm_damping * float(weighted_error @ weighted_error) if self.lm_damping else 0.0
        return self._weights, weighted_error, mu
