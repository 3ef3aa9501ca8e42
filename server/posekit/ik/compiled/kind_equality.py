r"""Compiled equality constraint task: MuJoCo's equality rows :math:`(J, r)`.

As :class:`~posekit.ik.tasks.EqualityConstraintTask`: once per step the kernel makes
MuJoCo's constraint rows (``mj_tendon`` first when the model has tendons, then
``mj_makeConstraint``), reads ``efc_*`` through the ``mjData`` struct (their arena
pointers move; offsets from :mod:`posekit.ik.compiled.mjdata_layout`) and keeps the
equality rows of the selected equalities: 3 per connect, 6 per weld, 1 per joint or
tendon coupling. Each row is weighted by its equality's cost.

Record: addresses of the per-equality selection (1.0/0.0) and cost arrays (``neq``).
Scalars ``(gain, lm_damping)``. :func:`error_norm` reports the norm of the selected
rows' residuals ``efc_pos`` (``compute_error``).
"""

from __future__ import annotations

import math

import mujoco
import numpy as np
from numba import njit

from posekit.ik.compiled import header as h
from posekit.ik.compiled.mjdata_layout import efc_offsets
from posekit.ik.compiled.native import call_v_pp, floats, int32s, int64s
from posekit.ik.compiled.packing import (
    NotCompiled,
    PackContext,
    Packed,
    all_columns,
    scalar,
    vector_address,
)
from posekit.ik.compiled.symbols import FN_MAKE_CONSTRAINT, FN_TENDON
from posekit.ik.tasks import EqualityConstraintTask

E_SELECTED = h.R_FIRST
E_COST = h.R_FIRST + 1
E_NEQ = h.R_FIRST + 2
_EQUALITY_ROW = int(mujoco.mjtConstraint.mjCNSTR_EQUALITY)
_ROWS_OF_TYPE = {
    int(mujoco.mjtEq.mjEQ_CONNECT): 3,
    int(mujoco.mjtEq.mjEQ_WELD): 6,
    int(mujoco.mjtEq.mjEQ_JOINT): 1,
    int(mujoco.mjtEq.mjEQ_TENDON): 1,
}


def pack(task: EqualityConstraintTask, context: PackContext) -> Packed:
    """The record of an equality constraint task (module docstring)."""
    if isinstance(efc_offsets(), str):
        raise NotCompiled(f"equality constraint rows cannot be read: {efc_offsets()}")
    model = context.model
    ids = task.equality_ids
    selected = np.zeros(model.neq)
    selected[ids] = 1.0
    rows = sum(_ROWS_OF_TYPE[int(model.eq_type[i])] for i in ids)
    columns = all_columns(model.nv)
    packed = Packed(h.K_EQUALITY, [], [], rows, columns, [columns, selected])
    cost = vector_address(packed, task.cost_by_equality, model.neq, "the equality costs")
    packed.ints = [int(selected.ctypes.data), cost, model.neq]
    packed.floats = [scalar(task.gain, "gain"), scalar(task.lm_damping, "lm_damping")]
    return packed


@njit(cache=True, nogil=True)
def make_constraints(ints: np.ndarray) -> None:
    """MuJoCo's constraint rows at the current ``q``, once per step."""
    if ints[h.H_EFC_READY]:
        return
    if ints[h.H_NTENDON]:
        call_v_pp(ints[h.H_FN + FN_TENDON], ints[h.H_MODEL], ints[h.H_DATA])
    call_v_pp(ints[h.H_FN + FN_MAKE_CONSTRAINT], ints[h.H_MODEL], ints[h.H_DATA])
    ints[h.H_EFC_READY] = 1


@njit(cache=True, nogil=True)
def _field(ints: np.ndarray, slot: int) -> int:
    """The pointer stored in ``mjData`` at the offset of EFC field ``slot``."""
    return int64s(ints[h.H_DATA] + ints[h.H_EFC + slot], 1)[0]


@njit(cache=True, nogil=True)
def _copy_row(ints: np.ndarray, row: int, nv: int, weight: float, out: np.ndarray) -> None:
    """``weight`` times MuJoCo's constraint Jacobian row ``row``, dense or sparse."""
    out[:] = 0.0
    if ints[h.H_SPARSE]:
        nefc = int32s(ints[h.H_DATA] + ints[h.H_EFC], 1)[0]
        count = int32s(_field(ints, 5), nefc)[row]
        start = int32s(_field(ints, 6), nefc)[row]
        columns = int32s(_field(ints, 7) + 4 * start, count)
        values = floats(_field(ints, 4) + 8 * start, count)
        for k in range(count):
            out[columns[k]] = weight * values[k]
    else:
        values = floats(_field(ints, 4) + 8 * row * nv, nv)
        for column in range(nv):
            out[column] = weight * values[column]


@njit(cache=True, nogil=True)
def _keeps(
    kinds: np.ndarray, ids: np.ndarray, selected: np.ndarray, row: int, count: int, limit: int
) -> bool:
    """Whether MuJoCo's row ``row`` is the task's next row (``count`` kept so far)."""
    return kinds[row] == _EQUALITY_ROW and selected[ids[row]] != 0.0 and count < limit


@njit(cache=True, nogil=True)
def error_norm(ints: np.ndarray, record: int) -> float:
    r""":math:`\|r(q)\|` over the selected equalities' rows at the current ``q``."""
    make_constraints(ints)
    nefc = int32s(ints[h.H_DATA] + ints[h.H_EFC], 1)[0]
    kinds = int32s(_field(ints, 1), nefc)
    ids = int32s(_field(ints, 2), nefc)
    residuals = floats(_field(ints, 3), nefc)
    selected = floats(ints[record + E_SELECTED], ints[record + E_NEQ])
    limit = ints[record + h.R_ROWS]
    count = 0
    squared_norm = 0.0
    for row in range(nefc):
        if _keeps(kinds, ids, selected, row, count, limit):
            squared_norm += residuals[row] * residuals[row]
            count += 1
    return math.sqrt(squared_norm)


@njit(cache=True, nogil=True)
def rows(
    ints: np.ndarray,
    scalars: np.ndarray,
    work: np.ndarray,
    record: int,
    out: np.ndarray,
    rhs: np.ndarray,
    first: int,
) -> tuple[int, float]:
    """Write the selected equality rows from ``first``; return ``(rows, ‖rhs‖²)``."""
    weighted = ints[record + h.R_WEIGHTED] != 0
    make_constraints(ints)
    nv = ints[h.H_NV]
    nefc = int32s(ints[h.H_DATA] + ints[h.H_EFC], 1)[0]
    kinds = int32s(_field(ints, 1), nefc)
    ids = int32s(_field(ints, 2), nefc)
    residuals = floats(_field(ints, 3), nefc)
    neq = ints[record + E_NEQ]
    selected = floats(ints[record + E_SELECTED], neq)
    cost = floats(ints[record + E_COST], neq)
    gain = scalars[ints[record + h.R_FLOATS]]
    limit = ints[record + h.R_ROWS]
    count = 0
    squared_norm = 0.0
    for row in range(nefc):
        if not _keeps(kinds, ids, selected, row, count, limit):
            continue
        weight = cost[ids[row]] if weighted else 1.0
        value = -gain * weight * residuals[row]
        rhs[first + count] = value
        squared_norm += value * value
        _copy_row(ints, row, nv, weight, out[first + count])
        count += 1
    return count, squared_norm
