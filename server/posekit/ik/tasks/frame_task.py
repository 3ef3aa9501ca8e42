r"""Frame task: regulate the pose of a body, geom or site in the world."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from posekit.ik.exceptions import TargetNotSet
from posekit.ik.lie import SE3
from posekit.ik.tasks.frame_residual import frame_error_and_map
from posekit.ik.tasks.kernels import frame_kernel
from posekit.ik.tasks.mapped_task import MappedFrameTask
from posekit.ik.tasks.pose_target import (
    POSE_BUFFER,
    PoseValues,
    store_pose_target,
    stored_pose,
)
from posekit.ik.tasks.validation import FRAME_COST_SHAPE, cost_vector

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration


class FrameTask(MappedFrameTask):
    r"""Regulate the position and orientation of a frame of interest on the robot.

    The error is the body twist from the frame :math:`b` to its target :math:`t`,

    .. math:: e(q) = \log(T_{0b}^{-1} T_{0t}) = \log(T_{bt}) \in \mathbb{R}^6,

    ordered (linear [m], angular [rad]). Its Jacobian, with :math:`{}_bJ_b` the body
    Jacobian of the frame and :math:`J_{\log}` the right Jacobian inverse of SE(3), is

    .. math:: J(q) = -J_{\log}(T_{tb})\,{}_bJ_b(q).

    Both come from one logarithm: :math:`\log(T_{tb}) = -e`.

    Costs are in [cost]/[m] for position and [cost]/[rad] for orientation;
    ``position_cost`` and ``orientation_cost`` keep the values last given (a scalar or
    one per axis) and ``cost`` is the resulting vector of shape ``(6,)``.
    """

    k: int = 6
    error_and_map = staticmethod(frame_error_and_map)
    kernel = staticmethod(frame_kernel)

    def __init__(
        self,
        frame_name: str | int,
        frame_type: str,
        position_cost: object,
        orientation_cost: object,
        gain: float = 1.0,
        lm_damping: float = 0.0,
    ) -> None:
        super().__init__(frame_name, frame_type, np.zeros(self.k), gain, lm_damping)
        self._target = np.zeros(POSE_BUFFER)  # T_0t, R_t, p_t (pose_target), in place
        self._has_target = False
        self._staged = PoseValues()
        self.set_position_cost(position_cost)
        self.set_orientation_cost(orientation_cost)

    def set_position_cost(self, position_cost: object) -> None:
        """Set the position cost: a scalar, or one value per frame axis (3,)."""
        self.cost[:3] = cost_vector(
            position_cost, 3, f"{type(self).__name__} position cost", FRAME_COST_SHAPE, "should"
        )
        self.position_cost = position_cost

    def set_orientation_cost(self, orientation_cost: object) -> None:
        """Set the orientation cost: a scalar, or one value per frame axis (3,)."""
        self.cost[3:] = cost_vector(
            orientation_cost,
            3,
            f"{type(self).__name__} orientation cost",
            FRAME_COST_SHAPE,
            "should",
        )
        self.orientation_cost = orientation_cost

    @property
    def transform_target_to_world(self) -> SE3 | None:
        """Target pose :math:`T_{0t}` of the frame in the world, or ``None`` until set."""
        return stored_pose(self._target) if self._has_target else None

    @transform_target_to_world.setter
    def transform_target_to_world(self, target: SE3) -> None:
        self.set_target(target)

    def set_target(self, transform_target_to_world: SE3) -> None:
        """Set the target pose :math:`T_{0t}` of the frame in the world."""
        store_pose_target(transform_target_to_world, "transform_target_to_world", self._target)
        if not self._has_target:
            self._has_target = True

    def set_target_values(self, wxyz: Sequence[float], position: Sequence[float]) -> None:
        """:meth:`set_target` of the pose with quaternion ``wxyz`` (w, x, y, z; normalised
        here) and ``position`` [m] given as numbers: the same checks and the same stored
        target as ``set_target(SE3(np.array([*wxyz, *position])))``, without building
        the transform (a target moved many times a second)."""
        self._staged.store(wxyz, position, "transform_target_to_world", self._target)
        if not self._has_target:
            self._has_target = True

    def set_target_from_configuration(self, configuration: Configuration) -> None:
        """Set the target to the frame's current pose."""
        frame_id = self._frame.id_in(configuration.model)
        self.set_target(SE3(configuration.frame_pose_by_id(frame_id, self.frame_type)))

    def compute_error(self, configuration: Configuration) -> np.ndarray:
        r"""Body twist :math:`e = \log(T_{bt})` ([m], [rad]), shape ``(6,)``."""
        return super().compute_error(configuration)

    def compute_jacobian(self, configuration: Configuration) -> np.ndarray:
        r"""Task Jacobian :math:`-J_{\log}(T_{tb})\,{}_bJ_b`, shape ``(6, nv)``."""
        return super().compute_jacobian(configuration)

    def kernel_targets(self) -> tuple[np.ndarray, np.ndarray]:
        """Target rotation :math:`R_t` (9, row-major) and position :math:`p_t` [m] (3)."""
        if not self._has_target:
            raise TargetNotSet(type(self).__name__)
        return self._target[7:16], self._target[16:]
