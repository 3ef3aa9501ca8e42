r"""Abstract matrix Lie group with the composition, plus/minus and Jacobian API.

For a group element :math:`X` and tangent vector :math:`\tau`:
:math:`X \oplus \tau = X \exp(\tau)` (right plus), :math:`\tau \oplus X = \exp(\tau) X`
(left plus), :math:`Y \ominus X = \log(X^{-1} Y)` (right minus) and
:math:`Y \ominus_l X = \log(Y X^{-1})` (left minus). The right Jacobian is
:math:`J_r(\tau) = J_l(-\tau)`, and :math:`J_{\log}(X) = J_r^{-1}(\log X)` maps a small
right perturbation of :math:`X` to the change of :math:`\log X`.
"""

from __future__ import annotations

import abc
from typing import TypeVar, overload

import numpy as np

GroupT = TypeVar("GroupT", bound="MatrixLieGroup")


class MatrixLieGroup(abc.ABC):
    """Interface shared by :class:`SO3` and :class:`SE3`."""

    matrix_dim: int
    """Size of the square matrix representation."""
    parameters_dim: int
    """Number of stored parameters (4 for SO3's ``wxyz``, 7 for SE3's ``wxyz_xyz``)."""
    tangent_dim: int
    """Dimension of the tangent space."""
    space_dim: int
    """Dimension of the space the group acts on."""

    __slots__ = ()

    # ------------------------------------------------------------ abstract API
    @classmethod
    @abc.abstractmethod
    def identity(cls: type[GroupT]) -> GroupT:
        """The identity element."""

    @classmethod
    @abc.abstractmethod
    def from_matrix(cls: type[GroupT], matrix: np.ndarray) -> GroupT:
        """The element of a matrix representation."""

    @classmethod
    @abc.abstractmethod
    def sample_uniform(cls: type[GroupT], rng: np.random.Generator | None = None) -> GroupT:
        """A random element, uniformly distributed over rotations."""

    @abc.abstractmethod
    def as_matrix(self) -> np.ndarray:
        """The matrix representation."""

    @abc.abstractmethod
    def parameters(self) -> np.ndarray:
        """The stored parameter vector."""

    @abc.abstractmethod
    def apply(self, target: np.ndarray) -> np.ndarray:
        """Act on a point of the space."""

    @abc.abstractmethod
    def multiply(self: GroupT, other: GroupT) -> GroupT:
        """Group composition ``self @ other``."""

    @classmethod
    @abc.abstractmethod
    def exp(cls: type[GroupT], tangent: np.ndarray) -> GroupT:
        """Exponential map of a tangent vector."""

    @abc.abstractmethod
    def inverse(self: GroupT) -> GroupT:
        """The inverse element."""

    @abc.abstractmethod
    def normalize(self: GroupT) -> GroupT:
        """The element with its parameters projected back onto the group."""

    @abc.abstractmethod
    def log(self) -> np.ndarray:
        """Logarithm map to the tangent space."""

    @abc.abstractmethod
    def adjoint(self) -> np.ndarray:
        r"""Adjoint matrix :math:`\mathrm{Ad}_X`, with :math:`X \exp(\tau) = \exp(\mathrm{Ad}_X \tau) X`."""

    @classmethod
    @abc.abstractmethod
    def ljac(cls, other: np.ndarray) -> np.ndarray:
        r"""Left Jacobian :math:`J_l(\tau)`."""

    @classmethod
    @abc.abstractmethod
    def ljacinv(cls, other: np.ndarray) -> np.ndarray:
        r"""Inverse left Jacobian :math:`J_l^{-1}(\tau)`."""

    # ------------------------------------------------------------ derived API
    @overload
    def __matmul__(self: GroupT, other: GroupT) -> GroupT: ...

    @overload
    def __matmul__(self, other: np.ndarray) -> np.ndarray: ...

    def __matmul__(self, other: object) -> object:
        """``X @ Y`` composes two elements; ``X @ p`` applies ``X`` to a point array ``p``."""
        if isinstance(other, type(self)):
            return self.multiply(other)
        if isinstance(other, np.ndarray):
            return self.apply(other)
        name = type(self).__name__
        raise TypeError(
            f"{name} @ {type(other).__name__} is not defined; the right operand must be "
            f"an {name} (composition) or a numpy point array of shape ({self.space_dim},)"
        )

    def rplus(self: GroupT, other: np.ndarray) -> GroupT:
        r"""Right plus :math:`X \oplus \tau = X \exp(\tau)`."""
        return self @ self.exp(other)

    def rminus(self: GroupT, other: GroupT) -> np.ndarray:
        r"""Right minus :math:`X \ominus Y = \log(Y^{-1} X)`."""
        return (other.inverse() @ self).log()

    def lplus(self: GroupT, other: np.ndarray) -> GroupT:
        r"""Left plus :math:`\tau \oplus X = \exp(\tau) X`."""
        return self.exp(other) @ self

    def lminus(self: GroupT, other: GroupT) -> np.ndarray:
        r"""Left minus :math:`\log(X Y^{-1})`."""
        return (self @ other.inverse()).log()

    def plus(self: GroupT, other: np.ndarray) -> GroupT:
        """Alias of :meth:`rplus`."""
        return self.rplus(other)

    def minus(self: GroupT, other: GroupT) -> np.ndarray:
        """Alias of :meth:`rminus`."""
        return self.rminus(other)

    @classmethod
    def rjac(cls, other: np.ndarray) -> np.ndarray:
        r"""Right Jacobian :math:`J_r(\tau) = J_l(-\tau)`."""
        return cls.ljac(-np.asarray(other, dtype=np.float64))

    @classmethod
    def rjacinv(cls, other: np.ndarray) -> np.ndarray:
        r"""Inverse right Jacobian :math:`J_r^{-1}(\tau) = J_l^{-1}(-\tau)`."""
        return cls.ljacinv(-np.asarray(other, dtype=np.float64))

    def jlog(self) -> np.ndarray:
        r"""Jacobian of the logarithm, :math:`J_{\log}(X) = J_r^{-1}(\log X)`.

        To first order, :math:`\log(X \exp(\delta)) = \log(X) + J_{\log}(X)\,\delta`.
        """
        return self.rjacinv(self.log())

    def interpolate(self: GroupT, other: GroupT, alpha: float = 0.5) -> GroupT:
        r"""Geodesic interpolation :math:`X \exp(\alpha \log(X^{-1} Y))`, :math:`\alpha \in [0, 1]`."""
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"Expected alpha within [0.0, 1.0] but received {alpha!r}")
        return self @ self.exp(alpha * (other.inverse().multiply(self)).inverse().log())

    def copy(self: GroupT) -> GroupT:
        """An independent copy."""
        return type(self)(self.parameters().copy())  # type: ignore[call-arg]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return bool(np.array_equal(self.parameters(), other.parameters()))

    def __hash__(self) -> int:
        """Hash of the parameter bytes (as upstream): equal elements hash equally."""
        return hash(self.parameters().tobytes())

    def __repr__(self) -> str:
        values = np.array2string(self.parameters(), precision=5, separator=", ")
        return f"{type(self).__name__}({values})"
