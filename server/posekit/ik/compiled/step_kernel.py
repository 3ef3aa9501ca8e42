r"""One IK step as one compiled call: objective, feasible set, daqp, velocity.

.. math:: v = \Delta q^\star / \Delta t, \qquad
          \Delta q^\star = \arg\min \tfrac12 \Delta q^T H \Delta q + c^T \Delta q
          \ \text{s.t. limits and constraints},

reading the kinematics already in ``mjData`` (``Configuration.update`` and
``integrate_inplace`` keep them current). The status (also in ``ints[H_STATUS]``) is
daqp's exit flag when :math:`\Delta q^\star` is finite, else ``NOT_FINITE - exit flag``:
below 1, no solution.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache

import numpy as np
from numba import njit

from posekit.ik.compiled import header as h
from posekit.ik.compiled.entry_points import direct
from posekit.ik.compiled.native import floats, int64s
from posekit.ik.compiled.objective_kernel import objective
from posekit.ik.compiled.qp_kernel import solve_qp

NOT_FINITE = -1000
"""Offset of the status of a step whose solution has a non-finite entry."""


@njit(cache=True, nogil=True)
def run_step(ints: np.ndarray, velocity: np.ndarray) -> int:
    """Write the velocity :math:`v` [rad/s, m/s] of one step of the plan ``I``; return the status."""
    scalars = floats(ints[h.H_FLOATS], ints[h.H_NFLOATS])
    work = floats(ints[h.H_WORK], ints[h.H_NWORK])
    ints[h.H_EFC_READY] = 0
    objective(ints, scalars, work)
    x = solve_qp(ints, scalars, work)
    dt = scalars[h.F_DT]
    finite = True
    for i in range(x.shape[0]):
        finite = finite and math.isfinite(x[i])
        velocity[i] = x[i] / dt
    if not finite:
        ints[h.H_STATUS] = NOT_FINITE - ints[h.H_STATUS]
    return ints[h.H_STATUS]


@njit(cache=True, nogil=True)
def run_step_at(address: int) -> int:
    """:func:`run_step` of the plan whose ``ints`` start at ``address``, into its velocity
    buffer (``ints[H_VELOCITY]``): one integer argument, no array to unbox."""
    ints = int64s(address, int64s(address, h.HEADER_INTS)[h.H_NINTS])
    return run_step(ints, floats(ints[h.H_VELOCITY], ints[h.H_NV]))


@cache
def step_entry() -> Callable[[int], int]:
    """:func:`run_step_at` without type dispatch (:mod:`~posekit.ik.compiled.entry_points`):
    for the address of a plan's own ``ints`` only."""
    return direct(run_step_at, "int64(int64)")
