r"""Tasks on one frame whose Jacobian is a small map applied to the frame's world Jacobian.

Frame, look-at and axis-align tasks all have :math:`J = L\,[J_p; J_r]`, with
:math:`[J_p; J_r]` MuJoCo's world-frame translational and rotational Jacobians of the
frame (``6 × nv``) and :math:`L` a ``k × 6`` map computed from the frame pose on Python
floats. The weighted residual is then a single product,
:math:`W = (\mathrm{diag}(w) L)\,[J_p; J_r]`.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from posekit.ik.tasks.frame_resolution import FrameRef
from posekit.ik.tasks.task import Objective, Residual, Task, objective_from_residual

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration

FramePose = tuple[list[float], list[float], np.ndarray]


class MappedFrameTask(Task):
    """A task on the frame ``frame_name`` of type ``frame_type``, with ``k`` error rows."""

    k: int

    def __init__(
        self,
        frame_name: str | int,
        frame_type: str,
        cost: np.ndarray,
        gain: float = 1.0,
        lm_damping: float = 0.0,
    ) -> None:
        super().__init__(cost=cost, gain=gain, lm_damping=lm_damping)
        self._frame = FrameRef(frame_name, frame_type)
        self.frame_name = frame_name
        self.frame_type = frame_type

    def _frame_pose(self, configuration: Configuration) -> FramePose:
        """Row-major rotation, position [m] and world Jacobian buffer of the frame."""
        frame_id = self._frame.id_in(configuration.model)
        frame_type = self.frame_type
        rotation = configuration.frame_rotation_by_id(frame_id, frame_type).ravel().tolist()
        position = configuration.frame_position_by_id(frame_id, frame_type).tolist()
        return rotation, position, configuration.frame_world_jacobian_by_id(frame_id, frame_type)

    @abc.abstractmethod
    def _error_and_map(
        self, configuration: Configuration
    ) -> tuple[Sequence[float], list[float], np.ndarray]:
        """Error (``k`` floats), map :math:`L` (``6k`` floats, row-major), world Jacobian."""

    def compute_error(self, configuration: Configuration) -> np.ndarray:
        """Task error, shape ``(k,)``."""
        return np.array(self._error_and_map(configuration)[0])

    def compute_jacobian(self, configuration: Configuration) -> np.ndarray:
        r"""Task Jacobian :math:`L\,[J_p; J_r]`, shape ``(k, nv)``."""
        _, jacobian_map, world_jacobian = self._error_and_map(configuration)
        return np.array(jacobian_map).reshape(self.k, 6) @ world_jacobian

    def compute_qp_residual(self, configuration: Configuration) -> Residual:
        r"""Weighted residual :math:`((\mathrm{diag}(w) L) [J_p; J_r],\ -\alpha w \odot e,\ \mu)`."""
        error, jacobian_map, world_jacobian = self._error_and_map(configuration)
        k = self.k
        costs = self.cost.tolist()
        weighted_map = np.array(jacobian_map).reshape(k, 6)
        weighted_map *= self.cost[:, None]
        scale = -self.gain
        weighted_error = [scale * w * e for w, e in zip(costs, error, strict=True)]
        mu = self.lm_damping * sum(e * e for e in weighted_error) if self.lm_damping else 0.0
        return weighted_map @ world_jacobian, np.array(weighted_error), mu

    def compute_qp_objective(self, configuration: Configuration) -> Objective:
        """QP objective from one evaluation of the frame pose."""
        return objective_from_residual(*self.compute_qp_residual(configuration))
