r"""The rotation group SO(3), stored as a unit quaternion ``wxyz``."""

from __future__ import annotations

import math
from typing import NamedTuple

import mujoco
import numpy as np

from posekit.ik.exceptions import InvalidShape
from posekit.ik.lie.base import MatrixLieGroup
from posekit.ik.lie.utils import (
    quat_exp,
    quat_log,
    quat_multiply,
    quat_rotate,
    quat_to_matrix,
    so3_left_jacobian,
    so3_left_jacobian_inverse,
)

_FULL_RANGE = (-math.inf, math.inf)


class RollPitchYaw(NamedTuple):
    """Euler angles in [rad]: :math:`R = R_z(\\text{yaw})\\, R_y(\\text{pitch})\\, R_x(\\text{roll})`."""

    roll: float
    pitch: float
    yaw: float


def _parameter_vector(value: object, size: int, what: str) -> np.ndarray:
    """``value`` as a float64 vector of shape ``(size,)``: the same array when it already
    is one (no copy, as upstream stores what it is given), else a converted copy."""
    array = np.asarray(value, dtype=np.float64)
    if array.shape != (size,):
        raise InvalidShape(f"{what} must have shape ({size},), got shape {array.shape}")
    return array


class SO3(MatrixLieGroup):
    r"""A 3D rotation :math:`R \in SO(3)` as the unit quaternion :math:`q = (w, x, y, z)`.

    Tangent vectors are rotation vectors :math:`\theta \in \mathbb{R}^3` [rad].
    ``wxyz`` is the array given to the constructor when it is a float64 vector of shape
    ``(4,)`` (not a copy), and :meth:`parameters` returns it: writing into it changes the
    rotation, as upstream. Use :meth:`copy` for an independent rotation.
    """

    matrix_dim = 3
    parameters_dim = 4
    tangent_dim = 3
    space_dim = 3

    __slots__ = ("wxyz",)

    def __init__(self, wxyz: np.ndarray) -> None:
        self.wxyz = _parameter_vector(wxyz, 4, "wxyz")

    # ---------------------------------------------------------- constructors
    @classmethod
    def identity(cls) -> SO3:
        return cls(np.array([1.0, 0.0, 0.0, 0.0]))

    @classmethod
    def from_x_radians(cls, theta: float) -> SO3:
        """Rotation by ``theta`` [rad] about the x axis."""
        return cls.exp(np.array([theta, 0.0, 0.0]))

    @classmethod
    def from_y_radians(cls, theta: float) -> SO3:
        """Rotation by ``theta`` [rad] about the y axis."""
        return cls.exp(np.array([0.0, theta, 0.0]))

    @classmethod
    def from_z_radians(cls, theta: float) -> SO3:
        """Rotation by ``theta`` [rad] about the z axis."""
        return cls.exp(np.array([0.0, 0.0, theta]))

    @classmethod
    def from_rpy_radians(cls, roll: float, pitch: float, yaw: float) -> SO3:
        r""":math:`R_z(\text{yaw}) R_y(\text{pitch}) R_x(\text{roll})`, angles in [rad]."""
        return cls.from_z_radians(yaw) @ cls.from_y_radians(pitch) @ cls.from_x_radians(roll)

    @classmethod
    def from_matrix(cls, matrix: np.ndarray) -> SO3:
        """Rotation of a ``(3, 3)`` rotation matrix."""
        matrix = np.asarray(matrix, dtype=np.float64)
        if matrix.shape != (3, 3):
            raise InvalidShape(f"matrix must have shape (3, 3), got shape {matrix.shape}")
        wxyz = np.empty(4)
        mujoco.mju_mat2Quat(wxyz, matrix.ravel())
        return cls(wxyz)

    @classmethod
    def sample_uniform(cls, rng: np.random.Generator | None = None) -> SO3:
        """A rotation drawn uniformly (Haar measure): a normalised 4D Gaussian quaternion."""
        generator = rng if rng is not None else np.random.default_rng()
        wxyz = generator.normal(size=4)
        return cls(wxyz / np.linalg.norm(wxyz))

    # ----------------------------------------------------------- accessors
    def parameters(self) -> np.ndarray:
        return self.wxyz

    def as_matrix(self) -> np.ndarray:
        return quat_to_matrix(self.wxyz)

    def compute_roll_radians(self) -> float:
        """Roll angle [rad] of :meth:`as_rpy_radians`."""
        w, x, y, z = self.wxyz
        return math.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))

    def compute_pitch_radians(self) -> float:
        """Pitch angle [rad] of :meth:`as_rpy_radians`, in [-π/2, π/2]."""
        w, x, y, z = self.wxyz
        return math.asin(min(1.0, max(-1.0, 2.0 * (w * y - z * x))))

    def compute_yaw_radians(self) -> float:
        """Yaw angle [rad] of :meth:`as_rpy_radians`."""
        w, x, y, z = self.wxyz
        return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))

    def as_rpy_radians(self) -> RollPitchYaw:
        """Roll, pitch and yaw [rad] with :math:`R = R_z R_y R_x`."""
        return RollPitchYaw(
            self.compute_roll_radians(), self.compute_pitch_radians(), self.compute_yaw_radians()
        )

    def clamp(
        self,
        roll_radians: tuple[float, float] = _FULL_RANGE,
        pitch_radians: tuple[float, float] = _FULL_RANGE,
        yaw_radians: tuple[float, float] = _FULL_RANGE,
    ) -> SO3:
        """The rotation with each Euler angle clamped to its ``(low, high)`` interval."""
        rpy = self.as_rpy_radians()
        return SO3.from_rpy_radians(
            float(np.clip(rpy.roll, *roll_radians)),
            float(np.clip(rpy.pitch, *pitch_radians)),
            float(np.clip(rpy.yaw, *yaw_radians)),
        )

    # ------------------------------------------------------------ group ops
    def apply(self, target: np.ndarray) -> np.ndarray:
        """:math:`R p` for a point ``target`` of shape ``(3,)``."""
        return quat_rotate(self.wxyz, _parameter_vector(target, 3, "target"))

    def multiply(self, other: SO3) -> SO3:
        return SO3(quat_multiply(self.wxyz, other.wxyz))

    def inverse(self) -> SO3:
        return SO3(self.wxyz * np.array([1.0, -1.0, -1.0, -1.0]))

    def normalize(self) -> SO3:
        return SO3(self.wxyz / np.linalg.norm(self.wxyz))

    @classmethod
    def exp(cls, tangent: np.ndarray) -> SO3:
        r""":math:`\exp(\theta)`: rotation by :math:`\|\theta\|` about :math:`\theta / \|\theta\|`."""
        return cls(quat_exp(_parameter_vector(tangent, 3, "tangent")))

    def log(self) -> np.ndarray:
        r"""Rotation vector :math:`\theta` with :math:`\|\theta\| \le \pi`."""
        return quat_log(self.wxyz)

    def adjoint(self) -> np.ndarray:
        r""":math:`\mathrm{Ad}_R = R`."""
        return self.as_matrix()

    @classmethod
    def ljac(cls, other: np.ndarray) -> np.ndarray:
        r""":math:`J_l(\theta) = I + \frac{1-\cos\phi}{\phi^2}[\theta]_\times + \frac{\phi-\sin\phi}{\phi^3}[\theta]_\times^2`."""
        return so3_left_jacobian(_parameter_vector(other, 3, "tangent"))

    @classmethod
    def ljacinv(cls, other: np.ndarray) -> np.ndarray:
        r""":math:`J_l^{-1}(\theta) = I - \tfrac12[\theta]_\times + \left(\frac{1}{\phi^2} - \frac{1+\cos\phi}{2\phi\sin\phi}\right)[\theta]_\times^2`."""
        return so3_left_jacobian_inverse(_parameter_vector(other, 3, "tangent"))
