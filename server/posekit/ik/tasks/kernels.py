r"""Compiled residual kernels of the mapped frame tasks (frame, look-at, axis-align).

Each kernel evaluates its task's error :math:`e` and map :math:`L` and writes the
weighted residual of the IK step in one pass:

.. math:: W = \mathrm{diag}(w)\,L\,[J_p; J_r], \qquad e_w = -\alpha\, w \odot e,

returning :math:`\|e_w\|^2` (the Levenberg-Marquardt term is ``lm_damping`` times it).
Targets come in two arrays ``(a, b)`` whose meaning is the task's: the frame task's
target rotation (9, row-major) and position (3); look-at's point and axis; axis-align's
direction and axis.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from posekit.ik.tasks.frame_residual import frame_error_and_map
from posekit.ik.tasks.pointing_residual import axis_align_error_and_map, look_at_error_and_map


@njit(cache=True)
def fill_weighted_rows(
    error: tuple,
    jacobian_map: tuple,
    world_jacobian: np.ndarray,
    cost: np.ndarray,
    gain: float,
    weighted_jacobian: np.ndarray,
    weighted_error: np.ndarray,
) -> float:
    """Write :math:`W` and :math:`e_w`; return :math:`\\|e_w\\|^2`."""
    rows = weighted_error.shape[0]
    columns = world_jacobian.shape[1]
    squared_norm = 0.0
    for i in range(rows):
        weight = cost[i]
        value = -gain * weight * error[i]
        weighted_error[i] = value
        squared_norm += value * value
        for column in range(columns):
            total = 0.0
            for k in range(6):
                total += jacobian_map[6 * i + k] * world_jacobian[k, column]
            weighted_jacobian[i, column] = weight * total
    return squared_norm


@njit(cache=True)
def frame_kernel(
    a: np.ndarray,
    b: np.ndarray,
    rotation: np.ndarray,
    position: np.ndarray,
    world_jacobian: np.ndarray,
    cost: np.ndarray,
    gain: float,
    out_jacobian: np.ndarray,
    out_error: np.ndarray,
) -> float:
    """Weighted residual of a frame task (module docstring)."""
    error, jacobian_map = frame_error_and_map(a, b, rotation, position)
    return fill_weighted_rows(
        error, jacobian_map, world_jacobian, cost, gain, out_jacobian, out_error
    )


@njit(cache=True)
def look_at_kernel(
    a: np.ndarray,
    b: np.ndarray,
    rotation: np.ndarray,
    position: np.ndarray,
    world_jacobian: np.ndarray,
    cost: np.ndarray,
    gain: float,
    out_jacobian: np.ndarray,
    out_error: np.ndarray,
) -> float:
    """Weighted residual of a look-at task (module docstring)."""
    error, jacobian_map = look_at_error_and_map(a, b, rotation, position)
    return fill_weighted_rows(
        error, jacobian_map, world_jacobian, cost, gain, out_jacobian, out_error
    )


@njit(cache=True)
def axis_align_kernel(
    a: np.ndarray,
    b: np.ndarray,
    rotation: np.ndarray,
    position: np.ndarray,
    world_jacobian: np.ndarray,
    cost: np.ndarray,
    gain: float,
    out_jacobian: np.ndarray,
    out_error: np.ndarray,
) -> float:
    """Weighted residual of an axis-align task (module docstring)."""
    error, jacobian_map = axis_align_error_and_map(a, b, rotation, position)
    return fill_weighted_rows(
        error, jacobian_map, world_jacobian, cost, gain, out_jacobian, out_error
    )
