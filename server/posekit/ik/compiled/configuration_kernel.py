r"""``Configuration.integrate_inplace`` as one compiled call.

:math:`q \leftarrow q \oplus v\,\Delta t` (``mj_integratePos``), then forward kinematics
(``mj_kinematics``, ``mj_comPos``): the same three MuJoCo calls as the Python path,
without three trips through the bindings. ``native`` holds the addresses (see
:func:`native_handles`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache

import mujoco
import numpy as np
from numba import njit

from posekit.ik.compiled.entry_points import direct
from posekit.ik.compiled.native import call_v_pp, call_v_pppd
from posekit.ik.compiled.symbols import (
    FN_COM_POS,
    FN_INTEGRATE_POS,
    FN_KINEMATICS,
    availability,
    native_libraries,
)

_MODEL, _DATA, _QPOS, _NV, _INTEGRATE, _KINEMATICS, _COM_POS = range(7)
OK, WRONG_SHAPE, NOT_FINITE = 0, 1, 2
INTEGRATE_SIGNATURE = "int64(int64[::1], float64[::1], float64)"

ISSUED: list[np.ndarray | None] = [None]
"""The velocity the last compiled step returned (``Plan.solve``): an array the engine
allocated, float64, one-dimensional and contiguous, which ``integrate_inplace`` may hand
to :func:`integrate_entry` without type dispatch when it receives that very array (and
it still has one dimension)."""


def native_handles(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray | None:
    """The addresses :func:`integrate_and_update` needs, or ``None`` without the C libraries."""
    if availability() is not None:
        return None
    functions = native_libraries().functions
    return np.array(
        [
            model._address,
            data._address,
            data.qpos.ctypes.data,
            model.nv,
            functions[FN_INTEGRATE_POS],
            functions[FN_KINEMATICS],
            functions[FN_COM_POS],
        ],
        dtype=np.int64,
    )


@njit(INTEGRATE_SIGNATURE, cache=True, nogil=True)
def integrate_and_update(native: np.ndarray, velocity: np.ndarray, dt: float) -> int:
    r"""Integrate ``velocity`` [nv] over ``dt`` [s] into ``qpos``, update the kinematics.

    Returns :data:`OK`, or :data:`WRONG_SHAPE` / :data:`NOT_FINITE` without touching
    ``qpos``.
    """
    if velocity.shape[0] != native[_NV]:
        return WRONG_SHAPE
    for i in range(velocity.shape[0]):
        if not math.isfinite(velocity[i]):
            return NOT_FINITE
    call_v_pppd(native[_INTEGRATE], native[_MODEL], native[_QPOS], velocity.ctypes.data, dt)
    call_v_pp(native[_KINEMATICS], native[_MODEL], native[_DATA])
    call_v_pp(native[_COM_POS], native[_MODEL], native[_DATA])
    return OK


@cache
def integrate_entry() -> Callable[[np.ndarray, np.ndarray, float], int]:
    """:func:`integrate_and_update` without type dispatch, for the :data:`ISSUED`
    velocity only (:mod:`~posekit.ik.compiled.entry_points`)."""
    return direct(integrate_and_update, INTEGRATE_SIGNATURE)
