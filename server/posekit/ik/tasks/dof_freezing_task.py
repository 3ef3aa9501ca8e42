r"""DoF freezing task: keep selected degrees of freedom still."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import mujoco
import numpy as np

from posekit.ik.exceptions import TaskDefinitionError
from posekit.ik.tasks.task import Residual, Task

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration


def check_dof_indices(model: mujoco.MjModel, dof_indices: Sequence[int]) -> list[int]:
    """Distinct integer DoF indices in ``[0, nv)``, sorted, or :class:`TaskDefinitionError`."""
    try:
        indices = list(dof_indices)
    except TypeError:
        raise TaskDefinitionError(
            f"dof_indices must be a sequence of integers, got {dof_indices!r}"
        ) from None
    if not indices:
        raise TaskDefinitionError("DofFreezingTask requires at least one DOF index.")
    for index in indices:
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise TaskDefinitionError(f"DOF index {index!r} is not an integer")
        if not 0 <= index < model.nv:
            raise TaskDefinitionError(f"DOF index {index} is out of range [0, {model.nv}).")
    if len(set(indices)) != len(indices):
        raise TaskDefinitionError(f"Duplicate DOF indices found: {indices}.")
    return sorted(int(index) for index in indices)


class DofFreezingTask(Task):
    r"""Freeze the DoFs :math:`S` at zero displacement: :math:`\Delta q_S = 0`.

    .. math:: e(q) = 0 \in \mathbb{R}^{|S|}, \qquad J = I_{S,:},

    the rows of the identity selecting the frozen DoFs. Meant as a hard
    ``constraints=`` entry of :func:`solve_ik`; used as an objective it penalises the
    frozen DoFs' displacement with unit cost.
    """

    def __init__(
        self, model: mujoco.MjModel, dof_indices: Sequence[int], gain: float = 1.0
    ) -> None:
        self.model = model
        self.nv = model.nv
        self._dof_indices = check_dof_indices(model, dof_indices)
        super().__init__(cost=np.ones(len(self._dof_indices)), gain=gain, lm_damping=0.0)
        self._select(self._dof_indices)

    @property
    def dof_indices(self) -> list[int]:
        """The frozen DoFs (indices into ``qvel``); assigning validates and re-selects."""
        return self._dof_indices

    @dof_indices.setter
    def dof_indices(self, dof_indices: Sequence[int]) -> None:
        self._select(check_dof_indices(self.model, dof_indices))

    def _select(self, indices: list[int]) -> None:
        self._dof_indices = indices
        self.k = len(indices)
        self.cost = np.ones(self.k)
        self._jacobian = np.zeros((self.k, self.nv))
        self._jacobian[np.arange(self.k), indices] = 1.0

    def compute_error(self, configuration: Configuration) -> np.ndarray:
        """Zero vector of shape ``(k,)``: velocity, not position, is constrained."""
        return np.zeros(self.k)

    def compute_jacobian(self, configuration: Configuration) -> np.ndarray:
        """Selection rows of the identity, shape ``(k, nv)``."""
        return self._jacobian.copy()

    def compute_qp_residual(self, configuration: Configuration) -> Residual:
        """Constant residual ``(J, 0, 0)``."""
        return self._jacobian, np.zeros(self.k), 0.0
