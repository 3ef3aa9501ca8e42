r"""Free-joint velocity limit: bound the speed of a floating base in its own frame.

MuJoCo's free-joint velocity is :math:`(v, \omega)`: the linear velocity :math:`v` of
the body origin in the world frame, then the angular velocity :math:`\omega` in the
body frame. Both bounds are expressed in the base frame, so with :math:`R` the base
orientation in the world:

.. math::

    |R^T \Delta p| \le v_{\max}\,\Delta t, \qquad |\Delta\theta| \le \omega_{\max}\,\Delta t,

component-wise, with :math:`(\Delta p, \Delta\theta)` the free joint's six coordinates
of the displacement :math:`\Delta q`. The linear part is six rows
:math:`[R^T; -R^T]` of :math:`G`; the angular part is a simple bound.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import mujoco
import numpy as np

from posekit.ik.exceptions import LimitDefinitionError
from posekit.ik.limits.limit import Bounds, Constraint, Limit
from posekit.ik.limits.velocity_limit import positive_speeds

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration


class FreeJointVelocityLimit(Limit):
    r"""Maximum linear and angular speeds of a free joint, in the base frame.

    Args:
        model: The robot model.
        max_linear_velocity: [m/s] along the base axes, scalar or (3,); ``None``
            leaves the linear part free.
        max_angular_velocity: [rad/s] about the base axes, scalar or (3,); ``None``
            leaves the angular part free.
        joint_name: The free joint; may be omitted when the model has exactly one.

    Attributes:
        base_body_id: Id of the body the free joint moves.
        linear_max: Linear bound [m/s], shape (3,), or ``None``.
        angular_max: Angular bound [rad/s], shape (3,), or ``None``.
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        max_linear_velocity: object = None,
        max_angular_velocity: object = None,
        joint_name: str | None = None,
    ) -> None:
        free = [j for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
        names = [model.joint(j).name for j in free]
        if joint_name is None:
            if len(free) != 1:
                raise LimitDefinitionError(
                    f"the model has {len(free)} free joints {names}; pass joint_name"
                )
            joint_id = free[0]
        else:
            joint_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, joint_name)
            if joint_id not in free:
                raise LimitDefinitionError(
                    f"{joint_name!r} is not a free joint; free joints are {names}"
                )
        self.model = model
        self.joint_name = model.joint(joint_id).name
        self.base_body_id = int(model.jnt_bodyid[joint_id])
        self.linear_max = (
            None
            if max_linear_velocity is None
            else positive_speeds(max_linear_velocity, 3, "max_linear_velocity")
        )
        self.angular_max = (
            None
            if max_angular_velocity is None
            else positive_speeds(max_angular_velocity, 3, "max_angular_velocity")
        )
        dof_adr = int(model.jnt_dofadr[joint_id])
        self._linear_dofs = slice(dof_adr, dof_adr + 3)
        self._angular_dofs = slice(dof_adr + 3, dof_adr + 6)

    def _angular_bounds(self, dt: float) -> Bounds | None:
        if self.angular_max is None:
            return None
        upper = np.full(self.model.nv, np.inf)
        upper[self._angular_dofs] = self.angular_max * dt
        return Bounds(-upper, upper)

    def _linear_rows(self, configuration: Configuration, dt: float) -> Constraint:
        r"""Rows :math:`[R^T; -R^T] \Delta p \le [v_{\max}; v_{\max}]\,\Delta t`."""
        if self.linear_max is None:
            return Constraint()
        rotation_t = configuration.data.xmat[self.base_body_id].reshape(3, 3).T
        G = np.zeros((6, self.model.nv))
        G[:3, self._linear_dofs] = rotation_t
        G[3:, self._linear_dofs] = -rotation_t
        bound = self.linear_max * dt
        return Constraint(G, np.concatenate((bound, bound)))

    def compute_qp_bounds_and_rows(
        self, configuration: Configuration, dt: float
    ) -> tuple[Bounds | None, Constraint]:
        """The angular part as simple bounds, the linear part as rows."""
        return self._angular_bounds(dt), self._linear_rows(configuration, dt)

    def compute_qp_inequalities(self, configuration: Configuration, dt: float) -> Constraint:
        r"""All rows: :math:`\pm R^T` on the linear DoFs, :math:`\pm I` on the angular DoFs.

        Ordered (linear upper, angular upper, linear lower, angular lower).
        """
        nv = self.model.nv
        upper_rows: list[np.ndarray] = []
        lower_rows: list[np.ndarray] = []
        upper_h: list[np.ndarray] = []
        linear = self._linear_rows(configuration, dt)
        if linear.G is not None and linear.h is not None:
            upper_rows.append(linear.G[:3])
            lower_rows.append(linear.G[3:])
            upper_h.append(linear.h[:3])
        if self.angular_max is not None:
            eye = np.zeros((3, nv))
            eye[:, self._angular_dofs] = np.eye(3)
            upper_rows.append(eye)
            lower_rows.append(-eye)
            upper_h.append(self.angular_max * dt)
        if not upper_rows:
            return Constraint()
        h = np.concatenate(upper_h)
        return Constraint(np.vstack(upper_rows + lower_rows), np.concatenate((h, h)))
