r"""Relative frame task: regulate the pose of one frame in another frame of the robot."""

from __future__ import annotations

from typing import TYPE_CHECKING

import mujoco
import numpy as np

from posekit.ik.exceptions import TargetNotSet
from posekit.ik.lie import SE3
from posekit.ik.lie.utils import se3_log_and_jlog
from posekit.ik.tasks.frame_resolution import FrameRef
from posekit.ik.tasks.pose_target import POSE_BUFFER, store_pose_target, stored_pose
from posekit.ik.tasks.task import Objective, Residual, Task, objective_from_residual
from posekit.ik.tasks.validation import FRAME_COST_SHAPE, cost_vector

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration


class RelativeFrameTask(Task):
    r"""Regulate the pose :math:`T_{rb}` of a frame :math:`b` in a root frame :math:`r`.

    With target :math:`T_{rt}`, the error is "current minus target",

    .. math:: e(q) = T_{rb} \ominus T_{rt} = \log(T_{rt}^{-1} T_{rb}) = \log(T_{tb}),

    and, with the body Jacobians :math:`{}_bJ_b`, :math:`{}_rJ_r` of both frames,

    .. math:: J(q) = J_{\log}(T_{tb})\,\big({}_bJ_b - \mathrm{Ad}_{T_{rb}^{-1}}\,{}_rJ_r\big).

    Errors are (linear [m], angular [rad]); costs [cost]/[m] and [cost]/[rad]
    (``position_cost`` and ``orientation_cost`` keep the values last given, ``cost``
    is the resulting vector of shape ``(6,)``).
    """

    k: int = 6

    def __init__(
        self,
        frame_name: str | int,
        frame_type: str,
        root_name: str | int,
        root_type: str,
        position_cost: object,
        orientation_cost: object,
        gain: float = 1.0,
        lm_damping: float = 0.0,
    ) -> None:
        super().__init__(cost=np.zeros(self.k), gain=gain, lm_damping=lm_damping)
        self._frame = FrameRef(frame_name, frame_type)
        self._root = FrameRef(root_name, root_type)
        self.frame_name = frame_name
        self.frame_type = frame_type
        self.root_name = root_name
        self.root_type = root_type
        self._target = np.zeros(POSE_BUFFER)  # T_rt (pose_target), written in place
        self._has_target = False
        self.set_position_cost(position_cost)
        self.set_orientation_cost(orientation_cost)

    def set_position_cost(self, position_cost: object) -> None:
        """Set the position cost: a scalar, or one value per axis (3,)."""
        self.cost[:3] = cost_vector(
            position_cost, 3, f"{type(self).__name__} position cost", FRAME_COST_SHAPE, "should"
        )
        self.position_cost = position_cost

    def set_orientation_cost(self, orientation_cost: object) -> None:
        """Set the orientation cost: a scalar, or one value per axis (3,)."""
        self.cost[3:] = cost_vector(
            orientation_cost,
            3,
            f"{type(self).__name__} orientation cost",
            FRAME_COST_SHAPE,
            "should",
        )
        self.orientation_cost = orientation_cost

    @property
    def transform_target_to_root(self) -> SE3 | None:
        """Target pose :math:`T_{rt}` of the frame in the root frame, or ``None`` until set."""
        return stored_pose(self._target) if self._has_target else None

    @transform_target_to_root.setter
    def transform_target_to_root(self, target: SE3) -> None:
        self.set_target(target)

    def set_target(self, transform_target_to_root: SE3) -> None:
        """Set the target pose :math:`T_{rt}` of the frame in the root frame."""
        store_pose_target(transform_target_to_root, "transform_target_to_root", self._target)
        if not self._has_target:
            self._has_target = True

    def kernel_target(self) -> np.ndarray:
        """:math:`T_{rt}` as ``wxyz_xyz`` in the task's own buffer; ``TargetNotSet`` until set."""
        if not self._has_target:
            raise TargetNotSet(type(self).__name__)
        return self._target[:7]

    def frame_id_in(self, model: mujoco.MjModel) -> int:
        """Id of the regulated frame in ``model``."""
        return self._frame.id_in(model)

    def root_id_in(self, model: mujoco.MjModel) -> int:
        """Id of the root frame in ``model``."""
        return self._root.id_in(model)

    def set_target_from_configuration(self, configuration: Configuration) -> None:
        """Set the target to the frame's current pose in the root frame."""
        self.set_target(self._frame_in_root(configuration))

    def _frame_in_root(self, configuration: Configuration) -> SE3:
        model = configuration.model
        frame = SE3(configuration.frame_pose_by_id(self._frame.id_in(model), self.frame_type))
        root = SE3(configuration.frame_pose_by_id(self._root.id_in(model), self.root_type))
        return root.inverse() @ frame

    def _error_and_jacobian(self, configuration: Configuration) -> tuple[np.ndarray, np.ndarray]:
        if not self._has_target:
            raise TargetNotSet(type(self).__name__)
        model = configuration.model
        frame_in_root = self._frame_in_root(configuration)
        frame_in_target = stored_pose(self._target).inverse() @ frame_in_root
        log_tb, jlog_tb = se3_log_and_jlog(frame_in_target.wxyz_xyz)
        frame_jacobian = configuration.frame_jacobian_by_id(
            self._frame.id_in(model), self.frame_type
        )
        root_jacobian = configuration.frame_jacobian_by_id(self._root.id_in(model), self.root_type)
        relative_jacobian = frame_jacobian - frame_in_root.inverse().adjoint() @ root_jacobian
        return log_tb, jlog_tb @ relative_jacobian

    def compute_error(self, configuration: Configuration) -> np.ndarray:
        r""":math:`\log(T_{tb})`, shape ``(6,)``."""
        return self._error_and_jacobian(configuration)[0]

    def compute_jacobian(self, configuration: Configuration) -> np.ndarray:
        """Task Jacobian, shape ``(6, nv)``."""
        return self._error_and_jacobian(configuration)[1]

    def compute_qp_residual(self, configuration: Configuration) -> Residual:
        """Weighted residual, computing both poses once."""
        return self.weighted_residual(*self._error_and_jacobian(configuration))

    def compute_qp_objective(self, configuration: Configuration) -> Objective:
        """QP objective, computing both poses once."""
        return objective_from_residual(*self.compute_qp_residual(configuration))
