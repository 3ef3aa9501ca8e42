r"""Compiled joint-space tasks: posture, damping and DoF freezing.

Posture (:math:`e = (q \ominus q^*) \odot m`, ``mj_differentiatePos``, :math:`m` zero on
free-joint DoFs) and damping (:math:`e = 0`) have :math:`W = \mathrm{diag}(w)` with the
weights :math:`w = c \odot m` (``PostureTask.weights``): as objectives they add
:math:`w^2` to the diagonal of :math:`H` and :math:`-w \odot e_w` to :math:`c`
(:func:`diagonal`, :func:`add_diagonal`), with :math:`e_w = -\alpha\, w \odot (q \ominus q^*)`
(:math:`w` already masks the free joint). As constraints they are the rows
:math:`\mathrm{diag}(m)\,\Delta q = -\alpha e`. DoF freezing writes the selection rows
:math:`I_{S,:}` with a zero right-hand side (cost and gain do not weight it, as in the
Python path).

Posture/damping record: target (``nq``), weights, mask (``nv``) addresses and the index
of its block of weighted errors; DoF freezing: the address of its ``int32`` DoFs.
Scalars ``(gain, lm_damping)``. :func:`error_norm` reports :math:`\|e\|` as
``compute_error`` defines :math:`e` (zero for damping and DoF freezing).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from posekit.ik.compiled import header as h
from posekit.ik.compiled.native import call_v_ppdpp, floats, int32s
from posekit.ik.compiled.packing import PackContext, Packed, all_columns, scalar, vector_address
from posekit.ik.compiled.rows import euclidean_norm
from posekit.ik.compiled.symbols import FN_DIFFERENTIATE_POS
from posekit.ik.compiled.views import work_vector
from posekit.ik.exceptions import TargetNotSet
from posekit.ik.tasks import DampingTask, DofFreezingTask, PostureTask
from posekit.ik.utils import get_freejoint_dims

P_TARGET = h.R_FIRST
P_WEIGHTS = h.R_FIRST + 1
P_MASK = h.R_FIRST + 2
P_SLOT = h.R_FIRST + 3
D_DOFS = h.R_FIRST


def pack_posture(task: PostureTask, context: PackContext) -> Packed:
    """The record of a posture or damping task (module docstring)."""
    model = context.model
    damping = type(task) is DampingTask
    target = task.target_q
    if target is None and not damping:
        raise TargetNotSet(type(task).__name__)
    mask = np.ones(model.nv)
    mask[get_freejoint_dims(model)[1]] = 0.0
    columns = all_columns(model.nv)
    kind = h.K_DAMPING if damping else h.K_POSTURE
    packed = Packed(kind, [], [], model.nv, columns, [columns, mask])
    packed.ints = [
        0 if target is None else vector_address(packed, target, model.nq, "target_q"),
        vector_address(packed, task.weights, model.nv, f"{type(task).__name__}.weights"),
        int(mask.ctypes.data),
        -1,  # the plan numbers the diagonal blocks
    ]
    packed.floats = [scalar(task.gain, "gain"), scalar(task.lm_damping, "lm_damping")]
    packed.slot_index = None if context.constraint else P_SLOT - h.R_FIRST
    return packed


def pack_dof_freezing(task: DofFreezingTask, context: PackContext) -> Packed:
    """The record of a DoF freezing task (module docstring)."""
    dofs = np.array(task.dof_indices, dtype=np.int32)
    columns = np.sort(dofs).astype(np.int32)
    packed = Packed(h.K_DOF_FREEZING, [int(dofs.ctypes.data)], [], dofs.shape[0], columns)
    packed.keep += [dofs, columns]
    packed.floats = [scalar(task.gain, "gain"), 0.0]
    return packed


@njit(cache=True, nogil=True)
def _difference(ints: np.ndarray, record: int, out: np.ndarray) -> None:
    r""":math:`q \ominus q^*` into ``out`` (``mj_differentiatePos``)."""
    call_v_ppdpp(
        ints[h.H_FN + FN_DIFFERENTIATE_POS],
        ints[h.H_MODEL],
        out.ctypes.data,
        1.0,
        ints[record + P_TARGET],
        ints[h.H_QPOS],
    )


@njit(cache=True, nogil=True)
def _error(ints: np.ndarray, record: int, out: np.ndarray) -> None:
    r""":math:`(q \ominus q^*) \odot m` into ``out`` (posture), zeros (damping)."""
    if ints[record + h.R_KIND] == h.K_DAMPING:
        out[:] = 0.0
        return
    _difference(ints, record, out)
    mask = floats(ints[record + P_MASK], out.shape[0])
    for i in range(out.shape[0]):
        out[i] *= mask[i]


@njit(cache=True, nogil=True)
def error_norm(ints: np.ndarray, record: int) -> float:
    r""":math:`\|(q \ominus q^*) \odot m\|` (posture); 0 (damping, DoF freezing: zero errors)."""
    if ints[record + h.R_KIND] == h.K_DOF_FREEZING:
        return 0.0
    nv = ints[h.H_NV]
    error = work_vector(ints, ints[h.W_JAC] + 12 * nv, nv)
    _error(ints, record, error)
    return euclidean_norm(error)


@njit(cache=True, nogil=True)
def diagonal(ints: np.ndarray, scalars: np.ndarray, work: np.ndarray, record: int) -> float:
    r"""Weighted error :math:`e_w` into the task's block; return :math:`\mu`."""
    nv = ints[h.H_NV]
    start = ints[h.W_DIAG] + nv * ints[record + P_SLOT]
    weighted_error = work[start : start + nv]
    if ints[record + h.R_KIND] == h.K_DAMPING:
        weighted_error[:] = 0.0
        return 0.0
    _difference(ints, record, weighted_error)
    base = ints[record + h.R_FLOATS]
    weights = floats(ints[record + P_WEIGHTS], nv)
    gain = scalars[base]
    for i in range(nv):
        weighted_error[i] *= weights[i]
        weighted_error[i] *= -gain
    lm_damping = scalars[base + 1]
    if lm_damping == 0.0:
        return 0.0
    squared_norm = 0.0
    for i in range(nv):
        squared_norm += weighted_error[i] * weighted_error[i]
    return lm_damping * squared_norm


@njit(cache=True, nogil=True)
def add_diagonal(
    ints: np.ndarray, work: np.ndarray, record: int, hessian: np.ndarray, gradient: np.ndarray
) -> None:
    r""":math:`H_{ii} \mathrel{+}= w_i^2`, :math:`c_i \mathrel{-}= w_i e_{w,i}`."""
    nv = ints[h.H_NV]
    start = ints[h.W_DIAG] + nv * ints[record + P_SLOT]
    weights = floats(ints[record + P_WEIGHTS], nv)
    for i in range(nv):
        hessian[i, i] += weights[i] * weights[i]
        gradient[i] -= weights[i] * work[start + i]


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
    r"""Rows of a posture/damping constraint or of a DoF freezing task; ``(rows, ‖rhs‖²)``."""
    weighted = ints[record + h.R_WEIGHTED] != 0
    gain = scalars[ints[record + h.R_FLOATS]]
    if ints[record + h.R_KIND] == h.K_DOF_FREEZING:
        dofs = int32s(ints[record + D_DOFS], ints[record + h.R_ROWS])
        for i in range(dofs.shape[0]):
            out[first + i, :] = 0.0
            out[first + i, dofs[i]] = 1.0
            rhs[first + i] = 0.0 if weighted else -gain * 0.0
        return dofs.shape[0], 0.0
    nv = ints[h.H_NV]
    start = ints[h.W_JAC] + 12 * nv
    error = work[start : start + nv]
    _error(ints, record, error)
    mask = floats(ints[record + P_MASK], nv)
    squared_norm = 0.0
    for i in range(nv):
        out[first + i, :] = 0.0
        out[first + i, i] = mask[i]
        value = -gain * error[i]
        rhs[first + i] = value
        squared_norm += value * value
    return nv, squared_norm
