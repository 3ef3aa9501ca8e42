r"""Center-of-mass task: regulate the position of the robot's center of mass."""

from __future__ import annotations

from typing import TYPE_CHECKING

import mujoco
import numpy as np

from posekit.ik.exceptions import TargetNotSet
from posekit.ik.tasks.task import Residual, Task
from posekit.ik.tasks.validation import cost_vector, target_vector

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration

_ROBOT_ROOT_BODY = 1


class ComTask(Task):
    r"""Regulate the center of mass :math:`c(q)` of the subtree of body 1 (the whole robot).

    .. math:: e(q) = c(q) - c^*, \qquad
              J(q) = \frac{\partial c}{\partial q} = \frac{1}{M}\sum_i m_i J_i(q),

    the mass-weighted average of the bodies' translational Jacobians
    (``mj_jacSubtreeCom``). Positions in [m]; costs in [cost]/[m].
    """

    k: int = 3

    def __init__(self, cost: object, gain: float = 1.0, lm_damping: float = 0.0) -> None:
        super().__init__(cost=np.zeros(self.k), gain=gain, lm_damping=lm_damping)
        self._target_point = np.zeros(3)  # c* [m], written in place
        self._has_target = False
        self.set_cost(cost)

    def set_cost(self, cost: object) -> None:
        """Set the cost: a scalar, a vector of shape (1,), or one value per axis (3,)."""
        self.cost = cost_vector(cost, self.k, f"{type(self).__name__} cost")

    @property
    def target_com(self) -> np.ndarray | None:
        """Target CoM position :math:`c^*` [m] in the world, or ``None`` until set."""
        return self._target_point if self._has_target else None

    @target_com.setter
    def target_com(self, target_com: object) -> None:
        self.set_target(target_com)

    def set_target(self, target_com: object) -> None:
        """Set the target CoM position :math:`c^*` [m] in the world, shape ``(3,)``."""
        self._target_point[:] = target_vector(target_com, self.k, "target CoM")
        if not self._has_target:
            self._has_target = True

    def set_target_from_configuration(self, configuration: Configuration) -> None:
        """Set the target to the current CoM."""
        self.set_target(configuration.data.subtree_com[_ROBOT_ROOT_BODY])

    def compute_error(self, configuration: Configuration) -> np.ndarray:
        r""":math:`c(q) - c^*` [m], shape ``(3,)``."""
        if not self._has_target:
            raise TargetNotSet(type(self).__name__)
        return configuration.data.subtree_com[_ROBOT_ROOT_BODY] - self._target_point

    def compute_jacobian(self, configuration: Configuration) -> np.ndarray:
        r""":math:`\partial c / \partial q`, shape ``(3, nv)``."""
        jacobian = np.empty((3, configuration.model.nv))
        mujoco.mj_jacSubtreeCom(configuration.model, configuration.data, jacobian, _ROBOT_ROOT_BODY)
        return jacobian

    def compute_qp_residual(self, configuration: Configuration) -> Residual:
        """Weighted residual of the CoM error."""
        return self.weighted_residual(
            self.compute_error(configuration), self.compute_jacobian(configuration)
        )
