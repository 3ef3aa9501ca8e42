"""Validation of task parameters: costs, gains, dampings and targets."""

from __future__ import annotations

import math

import numpy as np

from posekit.ik.exceptions import InvalidDamping, InvalidGain, InvalidTarget, TaskDefinitionError

# How upstream words a cost of the wrong shape; ``{what}`` names the cost (e.g.
# "FrameTask position cost"), ``{size}`` the expected length, ``{shape}`` the given shape.
FRAME_COST_SHAPE = (
    "{what} should be a vector of shape 1 (aka identical cost for all coordinates) or "
    "({size},) but got {shape}"
)
AXIS_COST_SHAPE = (
    "{what} must be a vector of shape (1,) (aka identical cost for all coordinates) or "
    "({size},). Got {shape}"
)
DOF_COST_SHAPE = (
    "{what} must be a vector of shape (1,) (aka identical cost for all dofs) or ({size},). "
    "Got {shape}"
)
SCALAR_COST_SHAPE = "{what} must be a scalar or a vector of shape (1,). Got {shape}"
EQUALITY_COST_SHAPE = "{what} must be a vector of shape (1,) or ({size},). Got {shape}."


def all_finite(array: np.ndarray) -> bool:
    """Whether every entry of a 1-D array is finite (on short vectors a Python loop over
    floats is several times cheaper than NumPy's reductions)."""
    return all(map(math.isfinite, array.tolist()))


def check_gain(gain: object) -> float:
    r"""A gain :math:`\alpha \in [0, 1]`, or :class:`InvalidGain`."""
    value = _finite_float(gain)
    if value is None or not 0.0 <= value <= 1.0:
        raise InvalidGain(f"`gain` must be in the range [0, 1], got {gain!r}")
    return value


def check_lm_damping(lm_damping: object) -> float:
    r"""A Levenberg-Marquardt damping :math:`\lambda \ge 0`, or :class:`InvalidDamping`."""
    value = _finite_float(lm_damping)
    if value is None or value < 0.0:
        raise InvalidDamping(f"`lm_damping` must be >= 0 and finite, got {lm_damping!r}")
    return value


def cost_vector(
    cost: object, size: int, what: str, shape_rule: str = AXIS_COST_SHAPE, verb: str = "must"
) -> np.ndarray:
    """A finite, non-negative cost vector of length ``size``.

    A scalar (or a length-1 vector) is broadcast to every coordinate. Otherwise raises
    :class:`TaskDefinitionError` in upstream's words: ``shape_rule`` (one of the
    ``*_COST_SHAPE`` templates) for a wrong shape, "``{what} {verb} be >= 0``" for a
    negative entry; posekit adds the bad value.
    """
    try:
        array = np.asarray(cost, dtype=np.float64)
    except (TypeError, ValueError):
        raise TaskDefinitionError(f"{what} must be numeric, got {cost!r}") from None
    if array.ndim == 0 or array.shape == (1,):
        array = np.full(size, float(array.reshape(-1)[0]))
    elif array.shape != (size,):
        raise TaskDefinitionError(shape_rule.format(what=what, size=size, shape=array.shape))
    if not all_finite(array):
        raise TaskDefinitionError(f"{what} must be finite, got {array.tolist()}")
    if (array < 0.0).any():
        raise TaskDefinitionError(f"{what} {verb} be >= 0, got {array.tolist()}")
    return array


def target_vector(value: object, size: int, what: str) -> np.ndarray:
    """A finite target vector of length ``size``, or :class:`InvalidTarget`.

    ``what`` names the target as upstream does ("target CoM", "target posture"…).
    """
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidTarget(f"Expected {what} to be numeric, got {value!r}") from None
    if array.shape != (size,):
        raise InvalidTarget(f"Expected {what} to have shape ({size},) but got {array.shape}")
    if not all_finite(array):
        raise InvalidTarget(f"Expected {what} to be finite, got {array.tolist()}")
    return array


def unit_vector(
    value: object, what: str, shape_error: str, error: type[Exception] = InvalidTarget
) -> np.ndarray:
    """A 3-vector normalised to unit length; a zero or non-finite vector is an ``error``.

    ``what`` names the vector ("LookAtTask axis"); ``shape_error`` is the message for a
    wrong shape, a template with ``{shape}``.
    """
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise error(f"{what} must be numeric, got {value!r}") from None
    if array.shape != (3,):
        raise error(shape_error.format(shape=array.shape) + f" ({array.tolist()})")
    if not all_finite(array):
        raise error(f"{what} must be finite, got {array.tolist()}")
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
