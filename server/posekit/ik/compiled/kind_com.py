r"""Compiled center-of-mass task: :math:`e = c(q) - c^*`, :math:`J = \partial c / \partial q`.

As :class:`~posekit.ik.tasks.ComTask`: :math:`c` is ``subtree_com`` of body 1 [m] and
:math:`J` is ``mj_jacSubtreeCom``'s (``3 × nv``), computed in one pass over the DoFs
instead of one ``mj_jac`` per body. ``mj_jacSubtreeCom`` sums :math:`m_b J_b / M_1`
over the bodies :math:`b` of the subtree, :math:`J_b` the Jacobian of the body's
center of mass :math:`x_b`; with MuJoCo's motion axis :math:`(\omega_i, v_i)` of DoF
:math:`i` (``cdof``, taken at ``subtree_com`` :math:`c_r` of the root), column
:math:`i` of :math:`J_b` is :math:`v_i + \omega_i \times (x_b - c_r)` for the bodies
in the subtree of the DoF's body :math:`b_i` and zero for the others. Since
:math:`\sum_{b \in \text{subtree}(b_i)} m_b x_b = M_{b_i} c_{b_i}` (subtree masses
``body_subtreemass``, subtree centers ``subtree_com``),

.. math:: J_{:,i} = \frac{M_{b_i}}{M_1}\,\big(v_i + \omega_i \times (c_{b_i} - c_r)\big),

and the DoFs outside the subtree of body 1 have zero columns (they are left out of
the record's columns). Record: target, cost, ``cdof``, ``body_subtreemass`` and
per-DoF body addresses, body count; scalars ``(gain, lm_damping)``.
:func:`error_norm` reports :math:`\|e\|`.
"""

from __future__ import annotations

import mujoco
import numpy as np
from numba import njit

from posekit.ik.compiled import header as h
from posekit.ik.compiled.native import floats, int32s
from posekit.ik.compiled.packing import PackContext, Packed, scalar, vector_address
from posekit.ik.compiled.rows import dense_rows, euclidean_norm
from posekit.ik.compiled.views import work_matrix, work_vector
from posekit.ik.exceptions import TargetNotSet
from posekit.ik.tasks import ComTask

M_TARGET = h.R_FIRST
M_COST = h.R_FIRST + 1
M_CDOF = h.R_FIRST + 2
M_SUBTREE_MASS = h.R_FIRST + 3
M_DOF_BODY = h.R_FIRST + 4
M_NBODY = h.R_FIRST + 5
_ROBOT_ROOT_BODY = 1


def pack(task: ComTask, context: PackContext) -> Packed:
    """The record of a CoM task (module docstring); ``TargetNotSet`` until its target is."""
    target = task.target_com
    if target is None:
        raise TargetNotSet(type(task).__name__)
    model = context.model
    dof_body = model.dof_bodyid.astype(np.int32)
    columns = subtree_columns(model, _ROBOT_ROOT_BODY)
    packed = Packed(h.K_COM, [], [], 3, columns, [columns, dof_body])
    packed.ints = [
        vector_address(packed, target, 3, "ComTask.target_com"),
        vector_address(packed, task.cost, 3, "ComTask.cost"),
        vector_address(packed, context.data.cdof.reshape(-1), 6 * model.nv, "cdof"),
        vector_address(packed, model.body_subtreemass, model.nbody, "body_subtreemass"),
        dof_body.ctypes.data,
        model.nbody,
    ]
    packed.floats = [scalar(task.gain, "gain"), scalar(task.lm_damping, "lm_damping")]
    return packed


def subtree_columns(model: mujoco.MjModel, body: int) -> np.ndarray:
    """Sorted ``int32`` DoFs of the bodies in the subtree of ``body``."""
    inside = np.zeros(model.nbody, dtype=bool)
    inside[body] = True
    for b in range(body + 1, model.nbody):  # parents come before their children
        inside[b] = bool(inside[model.body_parentid[b]])
    return np.flatnonzero(inside[model.dof_bodyid]).astype(np.int32)


@njit(cache=True, nogil=True)
def _jacobian(ints: np.ndarray, record: int, columns: np.ndarray, out: np.ndarray) -> None:
    """``mj_jacSubtreeCom`` of body 1 on ``columns`` into ``out`` (``3 × nv``; module docstring)."""
    nv = ints[h.H_NV]
    cdof = floats(ints[record + M_CDOF], 6 * nv)
    nbody = ints[record + M_NBODY]
    masses = floats(ints[record + M_SUBTREE_MASS], nbody)
    dof_body = int32s(ints[record + M_DOF_BODY], nv)
    centers = floats(ints[h.H_SUBTREE_COM], 3 * nbody)
    r = 3 * _ROBOT_ROOT_BODY
    for a in range(columns.shape[0]):
        i = columns[a]
        b = 3 * dof_body[i]
        weight = masses[dof_body[i]] / masses[_ROBOT_ROOT_BODY]
        x, y, z = (
            centers[b] - centers[r],
            centers[b + 1] - centers[r + 1],
            centers[b + 2] - centers[r + 2],
        )
        wx, wy, wz = cdof[6 * i], cdof[6 * i + 1], cdof[6 * i + 2]
        out[0, i] = weight * (cdof[6 * i + 3] + (wy * z - wz * y))
        out[1, i] = weight * (cdof[6 * i + 4] + (wz * x - wx * z))
        out[2, i] = weight * (cdof[6 * i + 5] + (wx * y - wy * x))


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
    """Write the task's rows from ``first`` (3, less its zero-cost ones); return ``(rows, ‖rhs‖²)``."""
    weighted = ints[record + h.R_WEIGHTED] != 0
    nv = ints[h.H_NV]
    start = ints[h.W_JAC]
    columns = int32s(ints[record + h.R_COLUMNS], ints[record + h.R_NCOLUMNS])
    jacobian = work_matrix(ints, start, 3, nv)
    _jacobian(ints, record, columns, jacobian)
    error = work_vector(ints, start + 12 * nv, 3)
    _error(ints, record, error)
    cost = floats(ints[record + M_COST], 3)
    gain = scalars[ints[record + h.R_FLOATS]]
    return dense_rows(error, jacobian, cost, weighted, gain, out, rhs, first, columns)
