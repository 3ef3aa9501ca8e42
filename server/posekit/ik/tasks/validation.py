"""Validation of task parameters: costs, gains, dampings and targets."""

from __future__ import annotations

import math

import numpy as np

from posekit.ik.exceptions import InvalidDamping, InvalidGain, InvalidTarget, TaskDefinitionError


def all_finite(array: np.ndarray) -> bool:
    """Whether every entry of a 1-D array is finite (on short vectors a Python loop over
    floats is several times cheaper than NumPy's reductions)."""
    return all(map(math.isfinite, array.tolist()))


def check_gain(gain: object) -> float:
    r"""A gain :math:`\alpha \in [0, 1]`, or :class:`InvalidGain`."""
    value = _finite_float(gain)
    if value is None or not 0.0 <= value <= 1.0:
        raise InvalidGain(f"gain must be a number in [0, 1], got {gain!r}")
    return value


def check_lm_damping(lm_damping: object) -> float:
    r"""A Levenberg-Marquardt damping :math:`\lambda \ge 0`, or :class:`InvalidDamping`."""
    value = _finite_float(lm_damping)
    if value is None or value < 0.0:
        raise InvalidDamping(f"lm_damping must be a finite number >= 0, got {lm_damping!r}")
    return value


def cost_vector(cost: object, size: int, what: str) -> np.ndarray:
    """A finite, non-negative cost vector of length ``size``.

    A scalar (or a length-1 vector) is broadcast to every coordinate. Raises
    :class:`TaskDefinitionError` naming the bad value otherwise.
    """
    try:
        array = np.asarray(cost, dtype=np.float64)
    except (TypeError, ValueError):
        raise TaskDefinitionError(f"{what} must be numeric, got {cost!r}") from None
    shapes = f"() or (1,) or ({size},)"
    if array.ndim == 0 or array.shape == (1,):
        array = np.full(size, float(array.reshape(-1)[0]))
    elif array.shape != (size,):
        raise TaskDefinitionError(f"{what} must have shape {shapes}, got shape {array.shape}")
    if not all_finite(array):
        raise TaskDefinitionError(f"{what} must be finite, got {array.tolist()}")
    if (array < 0.0).any():
        raise TaskDefinitionError(f"{what} must be >= 0, got {array.tolist()}")
    return array


def target_vector(value: object, size: int, what: str) -> np.ndarray:
    """A finite target vector of length ``size``, or :class:`InvalidTarget`."""
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidTarget(f"{what} must be numeric, got {value!r}") from None
    if array.shape != (size,):
        raise InvalidTarget(f"{what} must have shape ({size},), got shape {array.shape}")
    if not all_finite(array):
        raise InvalidTarget(f"{what} must be finite, got {array.tolist()}")
    return array


def unit_vector(value: object, what: str, error: type[Exception] = InvalidTarget) -> np.ndarray:
    """A 3-vector normalised to unit length; a zero or non-finite vector is an error."""
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise error(f"{what} must be numeric, got {value!r}") from None
    if array.shape != (3,) or not all_finite(array):
        raise error(f"{what} must be a finite vector of shape (3,), got {array.tolist()}")
    norm = float(np.linalg.norm(array))
    if norm < 1e-12:
        raise error(f"{what} must be non-zero, got {array.tolist()}")
    return array / norm


def _finite_float(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None
