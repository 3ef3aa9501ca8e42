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

from posekit.ik.exceptions import InvalidJoint, LimitDefinitionError
from posekit.ik.limits.limit import Bounds, Constraint, Limit
from posekit.ik.limits.velocity_limit import check_positive, speeds

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration


def _free_joint(model: mujoco.MjModel, joint_name: str | None) -> int:
    """Id of the free joint ``joint_name``, or of the model's only free joint."""
    free = [j for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
    names = [model.joint(j).name for j in free]
    if joint_name is not None:
        joint_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, joint_name)
        if joint_id < 0:
            raise InvalidJoint(joint_name, model)
        if joint_id not in free:
            raise LimitDefinitionError(
                f"Joint {joint_name} is not a free joint; free joints are {names}"
            )
        return joint_id
    if not free:
        raise LimitDefinitionError("Model has no free joint; FreeJointVelocityLimit needs one")
    if len(free) > 1:
        raise LimitDefinitionError(f"Model has multiple free joints {names}; pass joint_name")
    return free[0]


def _bound(value: object, what: str) -> np.ndarray | None:
    """A speed bound: ``None``, or 3 finite positive values (a scalar is broadcast)."""
    if value is None:
        return None
    array = speeds(value, 3, what)
    if array.shape != (3,):
        raise LimitDefinitionError(f"{what} must be a scalar or length 3. Got shape {array.shape}")
    return check_positive(array, what)


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

    Raises:
        LimitDefinitionError: neither bound given (the limit would bound nothing), a
            bound of the wrong shape, not finite or not positive, a joint that is not
            free, or no (or several) free joints and no ``joint_name``.
        InvalidJoint: ``joint_name`` does not exist (also a ``KeyError``, as upstream).
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        max_linear_velocity: object = None,
        max_angular_velocity: object = None,
        joint_name: str | None = None,
    ) -> None:
        joint_id = _free_joint(model, joint_name)
        self.model = model
        self.joint_name = model.joint(joint_id).name
        self.base_body_id = int(model.jnt_bodyid[joint_id])
        self.linear_max = _bound(max_linear_velocity, "max_linear_velocity")
        self.angular_max = _bound(max_angular_velocity, "max_angular_velocity")
        if self.linear_max is None and self.angular_max is None:
            raise LimitDefinitionError(
                "At least one of max_linear_velocity or max_angular_velocity must be set "
                "(both are None: the limit would bound nothing)"
            )
        dof_adr = int(model.jnt_dofadr[joint_id])
        self._linear_dofs = slice(dof_adr, dof_adr + 3)
        self._angular_dofs = slice(dof_adr + 3, dof_adr + 6)

    def compute_qp_bounds_and_rows(
        self, configuration: Configuration, dt: float
    ) -> tuple[Bounds | None, Constraint]:
        """The angular part as simple bounds, the linear part as rows."""
        nv = self.model.nv
        bounds = (
            None
            if self.angular_max is None
            else angular_bounds(self.angular_max, self._angular_dofs.start, nv, dt)
        )
        if self.linear_max is None:
            return bounds, Constraint()
        rotation = configuration.data.xmat[self.base_body_id].reshape(3, 3)
        return bounds, linear_rows(rotation, self.linear_max, self._linear_dofs.start, nv, dt)

    def compute_qp_inequalities(self, configuration: Configuration, dt: float) -> Constraint:
        r"""All rows: :math:`\pm R^T` on the linear DoFs, :math:`\pm I` on the angular DoFs.

        Ordered (linear upper, angular upper, linear lower, angular lower), as upstream.
        """
        bounds, linear = self.compute_qp_bounds_and_rows(configuration, dt)
        upper_rows: list[np.ndarray] = []
        lower_rows: list[np.ndarray] = []
        upper_h: list[np.ndarray] = []
        if linear.G is not None and linear.h is not None:
            upper_rows.append(linear.G[:3])
            lower_rows.append(linear.G[3:])
            upper_h.append(linear.h[:3])
        if bounds is not None:
            angular = np.eye(self.model.nv)[self._angular_dofs]
            upper_rows.append(angular)
            lower_rows.append(-angular)
            upper_h.append(bounds.upper[self._angular_dofs])
        h = np.concatenate(upper_h)
        return Constraint(np.vstack(upper_rows + lower_rows), np.concatenate((h, h)))


def linear_rows(
    rotation: np.ndarray, linear_max: np.ndarray, dof_adr: int, nv: int, dt: float
) -> Constraint:
    r"""Rows :math:`[R^T; -R^T]\,\Delta p \le [v_{\max}\Delta t;\ v_{\max}\Delta t]`.

    Args:
        rotation: Base orientation :math:`R` in the world, shape ``(3, 3)``.
        linear_max: :math:`v_{\max}` [m/s] along the base axes, shape ``(3,)``.
        dof_adr: Address of the free joint's first DoF (the linear ones come first).
        nv: Number of DoFs.
        dt: Timestep [s].
    """
    G = np.zeros((6, nv))
    G[:3, dof_adr : dof_adr + 3] = rotation.T
    G[3:, dof_adr : dof_adr + 3] = -rotation.T
    bound = linear_max * dt
    return Constraint(G, np.concatenate((bound, bound)))


def angular_bounds(angular_max: np.ndarray, dof_adr: int, nv: int, dt: float) -> Bounds:
    r"""Simple bounds :math:`|\Delta\theta_k| \le \omega_{\max,k}\,\Delta t` on the angular DoFs.

    ``dof_adr`` is the free joint's first angular DoF; the other DoFs are free (:math:`\pm\infty`).
    """
    upper = np.full(nv, np.inf)
    upper[dof_adr : dof_adr + 3] = angular_max * dt
    return Bounds(-upper, upper)
