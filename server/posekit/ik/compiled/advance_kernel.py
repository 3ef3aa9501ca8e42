r"""A whole step of a live configuration as one compiled call: solve, test, move, measure.

.. math:: v = \Delta q^\star / \Delta t \ \text{(the plan's step)}, \qquad
          \begin{cases}
          \text{converged (q kept)} & \max_i |v_i|\,\Delta t < \text{tol},\\
          q \leftarrow q \oplus v\,\Delta t,\ \text{then FK} & \text{otherwise,}
          \end{cases}

then every task's error norm :math:`\|e_i\|` at the kinematics that result
(:func:`~posekit.ik.compiled.error_kernel.error_norms`). This is what a session does
each step with ``solve_ik``, ``integrate_inplace`` and the plan's error norms, in the same
order and with the same MuJoCo calls (``mj_integratePos``, ``mj_kinematics``,
``mj_comPos``): the same numbers, without three calls from Python and the arrays they
pass.

The outcome is a code. Only :data:`ADVANCED` and :data:`CONVERGED` leave a result to
read; on any other code ``qpos`` and the kinematics are as they were before the call,
and the caller takes the Python road (which solves the step again and raises what it
raises).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache

import numpy as np
from numba import njit

from posekit.ik.compiled import header as h
from posekit.ik.compiled.entry_points import direct
from posekit.ik.compiled.error_kernel import error_norms
from posekit.ik.compiled.native import call_v_pp, call_v_pppd, floats, int64s
from posekit.ik.compiled.step_kernel import run_step
from posekit.ik.compiled.symbols import FN_COM_POS, FN_INTEGRATE_POS, FN_KINEMATICS

ADVANCED = 1
"""``q`` moved by :math:`v \\Delta t`; the norms are those at the new ``q``."""
CONVERGED = 2
"""The step was below tolerance: ``q`` kept; the norms are those at ``q``."""
NO_SOLUTION = 0
"""daqp found no (finite) solution: nothing moved."""
Q_NOT_FINITE = -1
"""Integration gave a non-finite ``q``: it was put back (and the kinematics with it)."""
NOT_COMPILED = -2
"""The plan takes the Python path (:attr:`Plan.reason <posekit.ik.compiled.plan.Plan.reason>`):
nothing was called."""

ADVANCE_SIGNATURE = "int64(int64, float64[::1], float64)"


@njit(cache=True, nogil=True)
def _update_kinematics(ints: np.ndarray) -> None:
    """``mj_kinematics`` then ``mj_comPos`` on the plan's model and data."""
    call_v_pp(ints[h.H_FN + FN_KINEMATICS], ints[h.H_MODEL], ints[h.H_DATA])
    call_v_pp(ints[h.H_FN + FN_COM_POS], ints[h.H_MODEL], ints[h.H_DATA])


@njit(ADVANCE_SIGNATURE, cache=True, nogil=True)
def advance_at(address: int, norms: np.ndarray, tolerance: float) -> int:
    """One step of the plan whose ``ints`` start at ``address`` (module docstring);
    ``tolerance`` [rad|m] bounds :math:`\\max_i |v_i| \\Delta t`, ``norms`` receives the
    error norms (objectives, then constraints). Returns an outcome code."""
    ints = int64s(address, int64s(address, h.HEADER_INTS)[h.H_NINTS])
    nv, nq = ints[h.H_NV], ints[h.H_NQ]
    velocity = floats(ints[h.H_VELOCITY], nv)
    if run_step(ints, velocity) < 1:
        return NO_SOLUTION
    dt = floats(ints[h.H_FLOATS], h.HEADER_FLOATS)[h.F_DT]
    largest = 0.0
    for i in range(nv):
        magnitude = abs(velocity[i])
        if magnitude > largest:
            largest = magnitude
    if largest * dt < tolerance:
        error_norms(ints, norms)
        return CONVERGED
    qpos = floats(ints[h.H_QPOS], nq)
    before = qpos.copy()
    integrate = ints[h.H_FN + FN_INTEGRATE_POS]
    call_v_pppd(integrate, ints[h.H_MODEL], ints[h.H_QPOS], ints[h.H_VELOCITY], dt)
    finite = True
    for i in range(nq):
        finite = finite and math.isfinite(qpos[i])
    if not finite:
        qpos[:] = before
        _update_kinematics(ints)
        return Q_NOT_FINITE
    _update_kinematics(ints)
    error_norms(ints, norms)
    return ADVANCED


@cache
def advance_entry() -> Callable[[int, np.ndarray, float], int]:
    """:func:`advance_at` without type dispatch (:mod:`~posekit.ik.compiled.entry_points`):
    for a plan's own address and norms buffer only."""
    return direct(advance_at, ADVANCE_SIGNATURE)
