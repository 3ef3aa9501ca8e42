r"""The rigid-transform group SE(3), stored as ``wxyz_xyz`` (unit quaternion, then translation [m])."""

from __future__ import annotations

import math
from typing import overload

import mujoco
import numpy as np

from posekit.ik.exceptions import InvalidMocapBody, InvalidShape
from posekit.ik.lie.base import MatrixLieGroup
from posekit.ik.lie.pose_kernels import compose_into, translation_into
from posekit.ik.lie.so3 import SO3, _parameter_vector
from posekit.ik.lie.utils import (
    invert_pose,
    quat_exp,
    quat_rotate,
    quat_to_matrix,
    se3_left_jacobian,
    se3_left_jacobian_inverse,
    se3_log,
    skew,
    so3_left_jacobian,
)

_FULL_RANGE = (-math.inf, math.inf)
_CONJUGATE = np.array([1.0, -1.0, -1.0, -1.0])
_IDENTITY = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])


class SE3(MatrixLieGroup):
    r"""A rigid transform :math:`T = (R, t)` acting as :math:`p \mapsto R p + t`.

    Tangent vectors are twists :math:`\xi = (\rho, \theta)`: linear part [m] first,
    angular part [rad] second. ``wxyz_xyz`` is the array given to the constructor when it
    is a float64 vector of shape ``(7,)`` (not a copy); :meth:`parameters`,
    :meth:`translation` and the ``wxyz`` of :meth:`rotation` are views of it, as upstream:
    writing into them changes the transform. Use :meth:`copy` for an independent one.
    """

    matrix_dim = 4
    parameters_dim = 7
    tangent_dim = 6
    space_dim = 3

    __slots__ = ("wxyz_xyz",)

    def __init__(self, wxyz_xyz: np.ndarray) -> None:
        self.wxyz_xyz = _parameter_vector(wxyz_xyz, 7, "wxyz_xyz")

    @classmethod
    def _wrap(cls, wxyz_xyz: np.ndarray) -> SE3:
        """An SE3 around a float64 array of shape (7,) known to be valid (no checks)."""
        pose = object.__new__(cls)
        pose.wxyz_xyz = wxyz_xyz
        return pose

    # ---------------------------------------------------------- constructors
    @classmethod
    def identity(cls) -> SE3:
        return cls(np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]))

    @classmethod
    def from_rotation_and_translation(cls, rotation: SO3, translation: np.ndarray) -> SE3:
        """The transform with the given rotation and translation [m]."""
        translation = _parameter_vector(translation, 3, "translation")
        return cls._wrap(np.array([*rotation.wxyz.tolist(), *translation.tolist()]))

    @classmethod
    def from_rotation(cls, rotation: SO3) -> SE3:
        """A pure rotation."""
        return cls.from_rotation_and_translation(rotation, np.zeros(3))

    @classmethod
    def from_translation(cls, translation: np.ndarray) -> SE3:
        """A pure translation [m]."""
        wxyz_xyz = np.empty(7)
        try:  # a float64 vector of 3 (the common case): one compiled call
            written = translation_into(translation, wxyz_xyz) == 0
        except TypeError:  # not a float64 vector
            written = False
        if not written:
            wxyz_xyz = _IDENTITY.copy()
            wxyz_xyz[4:] = _parameter_vector(translation, 3, "translation")
        pose = object.__new__(cls)
        pose.wxyz_xyz = wxyz_xyz
        return pose

    @classmethod
    def from_matrix(cls, matrix: np.ndarray) -> SE3:
        """The transform of a ``(4, 4)`` homogeneous matrix."""
        matrix = np.asarray(matrix, dtype=np.float64)
        if matrix.shape != (4, 4):
            raise InvalidShape(f"matrix must have shape (4, 4), got shape {matrix.shape}")
        return cls.from_rotation_and_translation(SO3.from_matrix(matrix[:3, :3]), matrix[:3, 3])

    @classmethod
    def from_mocap_id(cls, data: mujoco.MjData, mocap_id: int) -> SE3:
        """Pose of the mocap body with index ``mocap_id`` (into ``data.mocap_pos``)."""
        count = data.mocap_pos.shape[0]
        if not 0 <= mocap_id < count:
            valid = f"valid mocap ids: 0..{count - 1}" if count else "the model has no mocap body"
            raise InvalidMocapBody(f"#{mocap_id} ({valid})")
        return cls(np.concatenate([data.mocap_quat[mocap_id], data.mocap_pos[mocap_id]]))

    @classmethod
    def from_mocap_name(cls, model: mujoco.MjModel, data: mujoco.MjData, mocap_name: str) -> SE3:
        """Pose of the mocap body named ``mocap_name``."""
        body_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, mocap_name)
        mocap_id = int(model.body_mocapid[body_id]) if body_id >= 0 else -1
        if mocap_id == -1:
            raise InvalidMocapBody(mocap_name, model)
        return cls.from_mocap_id(data, mocap_id)

    @classmethod
    def sample_uniform(cls, rng: np.random.Generator | None = None) -> SE3:
        """A uniform random rotation with a translation uniform in [-1, 1]³ m."""
        generator = rng if rng is not None else np.random.default_rng()
        rotation = SO3.sample_uniform(generator)
        return cls.from_rotation_and_translation(rotation, generator.uniform(-1.0, 1.0, size=3))

    # ----------------------------------------------------------- accessors
    def parameters(self) -> np.ndarray:
        return self.wxyz_xyz

    def rotation(self) -> SO3:
        """The rotation part; its ``wxyz`` is a view of ``wxyz_xyz[:4]``."""
        return SO3(self.wxyz_xyz[:4])

    def translation(self) -> np.ndarray:
        """The translation part [m], shape ``(3,)``: a view of ``wxyz_xyz[4:]``."""
        return self.wxyz_xyz[4:]

    def as_matrix(self) -> np.ndarray:
        matrix = np.eye(4)
        matrix[:3, :3] = quat_to_matrix(self.wxyz_xyz[:4])
        matrix[:3, 3] = self.wxyz_xyz[4:]
        return matrix

    def clamp(
        self,
        x_translation: tuple[float, float] = _FULL_RANGE,
        y_translation: tuple[float, float] = _FULL_RANGE,
        z_translation: tuple[float, float] = _FULL_RANGE,
        roll_radians: tuple[float, float] = _FULL_RANGE,
        pitch_radians: tuple[float, float] = _FULL_RANGE,
        yaw_radians: tuple[float, float] = _FULL_RANGE,
    ) -> SE3:
        """The transform with translation [m] and Euler angles [rad] clamped to intervals."""
        x, y, z = self.wxyz_xyz[4:]
        translation = np.array(
            [np.clip(x, *x_translation), np.clip(y, *y_translation), np.clip(z, *z_translation)]
        )
        rotation = self.rotation().clamp(roll_radians, pitch_radians, yaw_radians)
        return SE3.from_rotation_and_translation(rotation, translation)

    # ------------------------------------------------------------ group ops
    def apply(self, target: np.ndarray) -> np.ndarray:
        """:math:`R p + t` for a point ``target`` of shape ``(3,)``."""
        point = _parameter_vector(target, 3, "target")
        return quat_rotate(self.wxyz_xyz[:4], point) + self.wxyz_xyz[4:]

    def multiply(self, other: SE3) -> SE3:
        r""":math:`(R_1 R_2,\; R_1 t_2 + t_1)` (compiled: one call, see ``pose_kernels``)."""
        out = np.empty(7)
        compose_into(self.wxyz_xyz, other.wxyz_xyz, out)
        pose = object.__new__(SE3)
        pose.wxyz_xyz = out
        return pose

    @overload
    def __matmul__(self, other: SE3) -> SE3: ...

    @overload
    def __matmul__(self, other: np.ndarray) -> np.ndarray: ...

    def __matmul__(self, other: object) -> object:
        """``X @ Y`` composes two poses (the common case, first); ``X @ p`` applies ``X``."""
        if type(other) is SE3:
            return self.multiply(other)
        return super().__matmul__(other)  # type: ignore[call-overload]

    def inverse(self) -> SE3:
        r""":math:`(R^T,\; -R^T t)`."""
        return SE3._wrap(invert_pose(self.wxyz_xyz))

    def normalize(self) -> SE3:
        out = self.wxyz_xyz.copy()
        out[:4] /= np.linalg.norm(out[:4])
        return SE3(out)

    @classmethod
    def exp(cls, tangent: np.ndarray) -> SE3:
        r""":math:`\exp(\rho, \theta) = (\exp(\theta),\; J_l(\theta)\rho)`."""
        tangent = _parameter_vector(tangent, 6, "tangent")
        out = np.empty(7)
        out[:4] = quat_exp(tangent[3:])
        out[4:] = so3_left_jacobian(tangent[3:]) @ tangent[:3]
        return cls(out)

    def log(self) -> np.ndarray:
        r""":math:`\log(R, t) = (J_l^{-1}(\theta) t,\; \theta)` with :math:`\theta = \log R`."""
        return se3_log(self.wxyz_xyz)

    def adjoint(self) -> np.ndarray:
        r""":math:`\mathrm{Ad}_T = \begin{bmatrix} R & [t]_\times R \\ 0 & R \end{bmatrix}`."""
        rotation = quat_to_matrix(self.wxyz_xyz[:4])
        adjoint = np.zeros((6, 6))
        adjoint[:3, :3] = rotation
        adjoint[3:, 3:] = rotation
        adjoint[:3, 3:] = skew(self.wxyz_xyz[4:]) @ rotation
        return adjoint

    @classmethod
    def ljac(cls, other: np.ndarray) -> np.ndarray:
        r"""Left Jacobian :math:`\begin{bmatrix} J_l(\theta) & Q(\rho,\theta) \\ 0 & J_l(\theta)\end{bmatrix}`."""
        return se3_left_jacobian(_parameter_vector(other, 6, "tangent"))

    @classmethod
    def ljacinv(cls, other: np.ndarray) -> np.ndarray:
        """Inverse of :meth:`ljac`."""
        return se3_left_jacobian_inverse(_parameter_vector(other, 6, "tangent"))
