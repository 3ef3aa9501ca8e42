r"""Tasks on one frame whose Jacobian is a small map applied to the frame's world Jacobian.

Frame, look-at and axis-align tasks all have :math:`J = L\,[J_p; J_r]`, with
:math:`[J_p; J_r]` MuJoCo's world-frame translational and rotational Jacobians of the
frame (``6 × nv``) and :math:`L` a ``k × 6`` map computed from the frame pose. Each
subclass names a compiled ``error_and_map`` function and its residual ``kernel``
(:mod:`posekit.ik.tasks.kernels`), which writes
:math:`W = (\mathrm{diag}(w) L)\,[J_p; J_r]` and :math:`e_w = -\alpha\,w \odot e`
in one call.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

import mujoco
import numpy as np

from posekit.ik.frames import FRAME_TO_POS_ATTR, FRAME_TO_XMAT_ATTR
from posekit.ik.tasks.frame_resolution import FrameRef
from posekit.ik.tasks.task import Objective, Residual, Task, objective_from_residual

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration

FrameArrays = tuple[np.ndarray, np.ndarray, np.ndarray]


class MappedFrameTask(Task):
    """A task on the frame ``frame_name`` of type ``frame_type``, with ``k`` error rows."""

    k: int
    error_and_map: ClassVar[Callable[..., tuple[tuple, tuple]]]
    kernel: ClassVar[Callable[..., float]]

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

    @abc.abstractmethod
    def kernel_targets(self) -> tuple[np.ndarray, np.ndarray]:
        """The two target arrays of the kernel; raises ``TargetNotSet`` until set.

        They are the task's own buffers, written in place by its setters (compiled
        plans point at them).
        """

    def frame_id_in(self, model: mujoco.MjModel) -> int:
        """Id of the task's frame in ``model`` (raises ``InvalidFrame`` when absent)."""
        return self._frame.id_in(model)

    def _frame_arrays(self, configuration: Configuration) -> FrameArrays:
        """Rotation (9, row-major), position [m] and world Jacobian buffer of the frame."""
        rotation, position = self._frame_pose_arrays(configuration)
        frame_id = self._frame.id_in(configuration.model)
        return (
            rotation,
            position,
            configuration.frame_world_jacobian_by_id(frame_id, self.frame_type),
        )

    def _frame_pose_arrays(self, configuration: Configuration) -> tuple[np.ndarray, np.ndarray]:
        """Rotation (9, row-major) and position [m] of the frame (no Jacobian)."""
        frame_id = self._frame.id_in(configuration.model)
        data = configuration.data
        return (
            getattr(data, FRAME_TO_XMAT_ATTR[self.frame_type])[frame_id],
            getattr(data, FRAME_TO_POS_ATTR[self.frame_type])[frame_id],
        )

    def compute_error(self, configuration: Configuration) -> np.ndarray:
        """Task error, shape ``(k,)``."""
        rotation, position = self._frame_pose_arrays(configuration)
        error, _ = type(self).error_and_map(*self.kernel_targets(), rotation, position)
        return np.array(error)

    def compute_jacobian(self, configuration: Configuration) -> np.ndarray:
        r"""Task Jacobian :math:`L\,[J_p; J_r]`, shape ``(k, nv)``."""
        rotation, position, world_jacobian = self._frame_arrays(configuration)
        _, jacobian_map = type(self).error_and_map(*self.kernel_targets(), rotation, position)
        return np.array(jacobian_map).reshape(self.k, 6) @ world_jacobian

    def compute_qp_residual(self, configuration: Configuration) -> Residual:
        r"""Weighted residual :math:`((\mathrm{diag}(w) L) [J_p; J_r],\ -\alpha w \odot e,\ \mu)`."""
        target_a, target_b = self.kernel_targets()
        rotation, position, world_jacobian = self._frame_arrays(configuration)
        weighted_jacobian = np.empty((self.k, world_jacobian.shape[1]))
        weighted_error = np.empty(self.k)
        squared_norm = type(self).kernel(
            target_a,
            target_b,
            rotation,
            position,
            world_jacobian,
            self.cost,
            self.gain,
            weighted_jacobian,
            weighted_error,
        )
        return weighted_jacobian, weighted_error, self.lm_damping * squared_norm

    def compute_qp_objective(self, configuration: Configuration) -> Objective:
        """QP objective from one evaluation of the frame pose."""
        return objective_from_residual(*self.compute_qp_residual(configuration))
