"""Robot configuration: a MuJoCo model, its data, and the kinematic queries IK needs."""

from __future__ import annotations

import logging
from collections.abc import Callable

import mujoco
import numpy as np

from posekit.ik.compiled.configuration_kernel import (
    ISSUED,
    integrate_and_update,
    integrate_entry,
    native_handles,
)
from posekit.ik.compiled.selection import ENGINE
from posekit.ik.exceptions import (
    InvalidConfigurationVector,
    NotWithinConfigurationLimits,
)
from posekit.ik.frames import FRAME_TO_JAC_FUNC, check_frame_type, resolve_frame_id
from posekit.ik.keyframes import keyframe_q
from posekit.ik.lie import SE3

logger = logging.getLogger(__name__)


def as_vector(value: object, size: int, what: str) -> np.ndarray:
    """``value`` as a finite float vector of length ``size``, or a clear error."""
    try:
        vector = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidConfigurationVector(f"{what} must be numeric, got {value!r}") from None
    if vector.shape != (size,):
        raise InvalidConfigurationVector(
            f"{what} must have shape ({size},), got shape {vector.shape}"
        )
    if not np.isfinite(vector).all():
        raise InvalidConfigurationVector(f"{what} must be finite, got {vector.tolist()}")
    return vector


class Configuration:
    r"""A robot configuration :math:`q` with forward kinematics applied.

    Wraps a :class:`mujoco.MjModel` and its own :class:`mujoco.MjData`. After
    :meth:`update`, frame poses, frame Jacobians and the center of mass are those of
    ``q``. Positions are in meters, angles in radians; ``q`` has ``nq`` coordinates
    and velocities have ``nv`` (quaternion joints make them differ).
    """

    def __init__(self, model: mujoco.MjModel, q: np.ndarray | None = None) -> None:
        self.model = model
        self.data = mujoco.MjData(model)
        self._world_jacobian = np.zeros((6, model.nv))
        self._jacp = self._world_jacobian[:3]
        self._jacr = self._world_jacobian[3:]
        self._constraints_stale = True
        self._scalar_limits = _scalar_joint_limits(model)
        self._ball_limits = _ball_joint_limits(model)
        self._native = native_handles(model, self.data)
        self._integrate: Callable[[np.ndarray, np.ndarray, float], int] = (
            integrate_entry() if self._native is not None else integrate_and_update
        )
        self.update(q=q)

    # ------------------------------------------------------------------ state
    def update(self, q: np.ndarray | None = None) -> None:
        """Set ``q`` (when given) and run forward kinematics.

        Computes body, geom and site poses (``mj_kinematics``) and the quantities
        frame and center-of-mass Jacobians need (``mj_comPos``).
        """
        if q is not None:
            self.data.qpos[:] = as_vector(q, self.model.nq, "q")
        mujoco.mj_kinematics(self.model, self.data)
        mujoco.mj_comPos(self.model, self.data)
        self._constraints_stale = True

    def kinematics_changed(self) -> None:
        """Note that ``data.qpos`` and the kinematics were changed by another writer (a
        compiled step, :meth:`Plan.advance <posekit.ik.compiled.plan.Plan.advance>`):
        the equality-constraint rows are made again when next needed."""
        self._constraints_stale = True

    def update_from_keyframe(self, key_name: str) -> None:
        """Set ``q`` to the ``qpos`` of a keyframe and run forward kinematics."""
        self.update(q=keyframe_q(self.model, key_name))

    def update_constraints(self) -> None:
        """Compute the constraint rows (``efc_*``) of equality constraints, once per ``q``.

        Tendon lengths and Jacobians (``mj_tendon``) are computed first when the model
        has tendons: MuJoCo leaves out the rows of tendon equalities without them.
        """
        if self._constraints_stale:
            if self.model.ntendon:
                mujoco.mj_tendon(self.model, self.data)
            mujoco.mj_makeConstraint(self.model, self.data)
            self._constraints_stale = False

    @property
    def q(self) -> np.ndarray:
        """A copy of the configuration vector, shape ``(nq,)``."""
        return self.data.qpos.copy()

    @property
    def nq(self) -> int:
        """Number of configuration coordinates."""
        return self.model.nq

    @property
    def nv(self) -> int:
        """Number of velocity coordinates (degrees of freedom)."""
        return self.model.nv

    # ----------------------------------------------------------------- limits
    def check_limits(self, tol: float = 1e-6, safety_break: bool = True) -> None:
        """Check that every limited joint is within its range, up to ``tol``.

        Hinge and slide joints compare their coordinate with ``jnt_range``; ball joints
        compare their rotation angle with ``jnt_range[1]``. Free joints have no limits.

        Raises:
            NotWithinConfigurationLimits: when a joint is out of range and
                ``safety_break`` is true; otherwise a warning is logged.
        """
        qpos = self.data.qpos
        joint_ids, qpos_adr, lower, upper = self._scalar_limits
        values = qpos[qpos_adr]
        bad = np.flatnonzero((values < lower - tol) | (values > upper + tol))
        violations = [(joint_ids[i], values[i], lower[i], upper[i]) for i in bad]
        for joint_id, adr, max_angle in self._ball_limits:
            angle = _quaternion_angle(qpos[adr : adr + 4])
            if angle > max_angle + tol:
                violations.append((joint_id, angle, 0.0, max_angle))
        for joint_id, value, lo, hi in violations:
            error = NotWithinConfigurationLimits(int(joint_id), value, lo, hi, self.model)
            if safety_break:
                raise error
            logger.warning("%s", error)

    # ------------------------------------------------------------- kinematics
    def get_frame_jacobian(self, frame_name: str | int, frame_type: str = "body") -> np.ndarray:
        r"""Body Jacobian :math:`{}_B J_{WB}` of a frame, shape ``(6, nv)``.

        Rows are the linear then angular velocity of the frame, both expressed in the
        frame itself: :math:`{}_B v_{WB} = {}_B J_{WB}\,\dot q`. ``frame_type`` defaults
        to ``"body"``, so Pink's one-argument call ``get_frame_jacobian(body)`` works.

        Raises:
            InvalidFrame: the frame does not exist (also a ``KeyError``, as in Pink).
            UnsupportedFrame: ``frame_type`` is not body, geom or site.
        """
        frame_id = resolve_frame_id(self.model, frame_name, frame_type)
        return self.frame_jacobian_by_id(frame_id, frame_type)

    def frame_jacobian_by_id(self, frame_id: int, frame_type: str) -> np.ndarray:
        """:meth:`get_frame_jacobian` for a frame id already resolved."""
        FRAME_TO_JAC_FUNC[frame_type](self.model, self.data, self._jacp, self._jacr, frame_id)
        rotation = self.frame_rotation_by_id(frame_id, frame_type)
        jacobian = np.empty((6, self.model.nv))
        np.matmul(rotation.T, self._jacp, out=jacobian[:3])
        np.matmul(rotation.T, self._jacr, out=jacobian[3:])
        return jacobian

    def frame_world_jacobian_by_id(self, frame_id: int, frame_type: str) -> np.ndarray:
        """World-frame Jacobian ``[J_p; J_r]`` of a frame's origin, shape ``(6, nv)``.

        The array is a buffer owned by the configuration, overwritten by the next
        Jacobian query: copy it to keep it.
        """
        FRAME_TO_JAC_FUNC[frame_type](self.model, self.data, self._jacp, self._jacr, frame_id)
        return self._world_jacobian

    def frame_rotation_by_id(self, frame_id: int, frame_type: str) -> np.ndarray:
        """Rotation matrix of a frame in the world, shape ``(3, 3)`` (a view)."""
        data = self.data
        if frame_type == "site":
            return data.site_xmat[frame_id].reshape(3, 3)
        if frame_type == "body":
            return data.xmat[frame_id].reshape(3, 3)
        return data.geom_xmat[frame_id].reshape(3, 3)

    def frame_position_by_id(self, frame_id: int, frame_type: str) -> np.ndarray:
        """Position of a frame in the world in [m], shape ``(3,)`` (a view)."""
        data = self.data
        if frame_type == "site":
            return data.site_xpos[frame_id]
        if frame_type == "body":
            return data.xpos[frame_id]
        return data.geom_xpos[frame_id]

    def frame_pose_by_id(self, frame_id: int, frame_type: str) -> np.ndarray:
        """Pose of a frame in the world as ``wxyz_xyz``, shape ``(7,)``."""
        pose = np.empty(7)
        if frame_type == "body":
            pose[:4] = self.data.xquat[frame_id]
        else:
            mujoco.mju_mat2Quat(pose[:4], self.frame_rotation_by_id(frame_id, frame_type).ravel())
        pose[4:] = self.frame_position_by_id(frame_id, frame_type)
        return pose

    def get_transform_frame_to_world(self, frame_name: str | int, frame_type: str = "body") -> SE3:
        """Pose :math:`T_{WB}` of a frame in the world.

        ``frame_type`` defaults to ``"body"`` (Pink's one-argument call); an unknown frame
        raises :class:`InvalidFrame`, also a ``KeyError``.
        """
        frame_id = resolve_frame_id(self.model, frame_name, frame_type)
        return SE3(self.frame_pose_by_id(frame_id, frame_type))

    def get_transform(
        self,
        source_name: str | int,
        source_type: str,
        dest_name: str | int,
        dest_type: str,
    ) -> SE3:
        r"""Pose of the source frame in the destination frame, :math:`T_{DS} = T_{WD}^{-1} T_{WS}`."""
        check_frame_type(source_type)
        check_frame_type(dest_type)
        source = self.get_transform_frame_to_world(source_name, source_type)
        dest = self.get_transform_frame_to_world(dest_name, dest_type)
        return dest.inverse() @ source

    # ------------------------------------------------------------ integration
    def integrate(self, velocity: np.ndarray, dt: float) -> np.ndarray:
        r"""Configuration reached by applying ``velocity`` for ``dt`` seconds.

        Computes :math:`q \oplus v\,\Delta t` on the configuration manifold
        (``mj_integratePos``: quaternions are integrated on SO(3)).
        """
        q = self.data.qpos.copy()
        mujoco.mj_integratePos(self.model, q, as_vector(velocity, self.model.nv, "velocity"), dt)
        return q

    def integrate_inplace(self, velocity: np.ndarray, dt: float) -> None:
        """Integrate ``velocity`` over ``dt`` into the current configuration, then update.

        With the compiled engine, one compiled call makes the same three MuJoCo calls.
        """
        native = self._native
        if native is not None and ENGINE[0] == "compiled":
            try:
                if velocity is ISSUED[0] and velocity.ndim == 1:  # the engine's own array
                    done = self._integrate(native, velocity, dt) == 0
                else:
                    done = integrate_and_update(native, velocity, dt) == 0
            except TypeError:  # not a contiguous float64 vector, or dt not a number
                done = False
            if done:
                self._constraints_stale = True
                return
        velocity = as_vector(velocity, self.model.nv, "velocity")
        mujoco.mj_integratePos(self.model, self.data.qpos, velocity, dt)
        mujoco.mj_kinematics(self.model, self.data)
        mujoco.mj_comPos(self.model, self.data)
        self._constraints_stale = True

    # --------------------------------------------------------------- dynamics
    def get_inertia_matrix(self) -> np.ndarray:
        r"""Joint-space inertia matrix :math:`M(q)`, shape ``(nv, nv)``, in SI units."""
        mujoco.mj_crb(self.model, self.data)
        inertia = np.zeros((self.model.nv, self.model.nv))
        mujoco.mj_fullM(self.model, self.data, inertia)
        return inertia


def _scalar_joint_limits(
    model: mujoco.MjModel,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Joint ids, qpos addresses and ranges of the limited hinge and slide joints."""
    scalar = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
    ids = np.array(
        [j for j in range(model.njnt) if model.jnt_limited[j] and int(model.jnt_type[j]) in scalar],
        dtype=int,
    )
    return ids, model.jnt_qposadr[ids], model.jnt_range[ids, 0], model.jnt_range[ids, 1]


def _ball_joint_limits(model: mujoco.MjModel) -> list[tuple[int, int, float]]:
    """(joint id, qpos address, maximum rotation angle) of the limited ball joints."""
    return [
        (j, int(model.jnt_qposadr[j]), float(model.jnt_range[j, 1]))
        for j in range(model.njnt)
        if model.jnt_limited[j] and model.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL
    ]


def _quaternion_angle(wxyz: np.ndarray) -> float:
    """Rotation angle in [0, π] of a (not necessarily unit) quaternion."""
    return 2.0 * float(np.arctan2(np.linalg.norm(wxyz[1:]), abs(wxyz[0])))
