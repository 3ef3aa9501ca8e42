r"""Compiled center-of-mass task: :math:`e = c(q) - c^*`, :math:`J = \partial c / \partial q`.

As :class:`~posekit.ik.tasks.ComTask`: :math:`c` is ``subtree_com`` of body 1 [m] and
:math:`J` comes from ``mj_jacSubtreeCom`` (``3 × nv``). Record: target and cost
addresses; scalars ``(gain, lm_damping)``. :func:`error_norm` reports :math:`\|e\|`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from posekit.ik.compiled import header as h
from posekit.ik.compiled.native import call_v_pppi, floats, int32s
from posekit.ik.compiled.packing import PackContext, Packed, all_columns, scalar, vector_address
from posekit.ik.compiled.rows import dense_rows, euclidean_norm
from posekit.ik.compiled.symbols import FN_JAC_SUBTREE_COM
from posekit.ik.compiled.views import work_matrix, work_vector
from posekit.ik.exceptions import TargetNotSet
from posekit.ik.tasks import ComTask

M_TARGET = h.R_FIRST
M_COST = h.R_FIRST + 1
_ROBOT_ROOT_BODY = 1


def pack(task: ComTask, context: PackContext) -> Packed:
    """The record of a CoM task (module docstring); ``TargetNotSet`` until its target is."""
    target = task.target_com
    if target is None:
        raise TargetNotSet(type(task).__name__)
    columns = all_columns(context.model.nv)
    packed = Packed(h.K_COM, [], [], 3, columns, [columns])
    packed.ints = [
        vector_address(packed, target, 3, "ComTask.target_com"),
        vector_address(packed, task.cost, 3, "ComTask.cost"),
    ]
    packed.floats = [scalar(task.gain, "gain"), scalar(task.lm_damping, "lm_damping")]
    return packed


@njit(cache=True, nogil=True)
def _error(ints: np.ndarray, record: int, out: np.ndarray) -> None:
    r""":math:`c(q) - c^*` [m] into ``out`` (3), from ``subtree_com`` in ``mjData``."""
    com = floats(ints[h.H_SUBTREE_COM] + 8 * 3 * _ROBOT_ROOT_BODY, 3)
    target = floats(ints[record + M_TARGET], 3)
    for i in range(3):
        out[i] = com[i] - target[i]


@njit(cache=True, nogil=True)
def error_norm(ints: np.ndarray, record: int) -> float:
    r""":math:`\|c(q) - c^*\|` [m] (``compute_error``'s norm); needs ``mj_comPos`` done."""
    error = work_vector(ints, ints[h.W_JAC] + 12 * ints[h.H_NV], 3)
    _error(ints, record, error)
    return euclidean_norm(error)


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
    """Write the task's 3 rows from ``first``; return ``(3, ‖rhs‖²)``."""
    weighted = ints[record + h.R_WEIGHTED] != 0
    nv = ints[h.H_NV]
    start = ints[h.W_JAC]
    call_v_pppi(
        ints[h.H_FN + FN_JAC_SUBTREE_COM],
        ints[h.H_MODEL],
        ints[h.H_DATA],
        ints[h.H_WORK] + 8 * start,
        _ROBOT_ROOT_BODY,
    )
    jacobian = work_matrix(ints, start, 3, nv)
    error = work_vector(ints, start + 12 * nv, 3)
    _error(ints, record, error)
    cost = floats(ints[record + M_COST], 3)
    gain = scalars[ints[record + h.R_FLOATS]]
    columns = int32s(ints[record + h.R_COLUMNS], ints[record + h.R_NCOLUMNS])
    return 3, dense_rows(error, jacobian, cost, weighted, gain, out, rhs, first, columns)
