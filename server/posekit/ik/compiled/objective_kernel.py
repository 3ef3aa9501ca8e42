r"""The objective of a compiled step: every task's rows, then :math:`H` and :math:`c`.

In task order (as :func:`posekit.ik.solve.assemble_qp`): residual tasks write their
rows into :math:`W, E` and add :math:`\mu_i` to the shift, diagonal tasks (posture,
damping) keep their weighted error, dense tasks (kinetic energy) wait. Then

.. math:: H = W^T W + \sum \mathrm{diag}(w^2) + \sum_j H_j + (\delta + \textstyle\sum_i \mu_i) I,
          \qquad c = -W^T E - \sum w \odot e_w,

with :math:`W^T W` summed only over each task's columns
(:func:`~posekit.ik.compiled.rows.add_normal_equations`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from posekit.ik.compiled import header as h
from posekit.ik.compiled import (
    kind_com,
    kind_equality,
    kind_joint_space,
    kind_kinetic_energy,
    kind_mapped_frame,
    kind_relative_frame,
)
from posekit.ik.compiled.native import counter, int32s, int64s
from posekit.ik.compiled.rows import add_normal_equations, mirror_upper
from posekit.ik.compiled.views import work_matrix


@njit(cache=True, nogil=True)
def task_rows(
    ints: np.ndarray,
    scalars: np.ndarray,
    work: np.ndarray,
    record: int,
    out: np.ndarray,
    rhs: np.ndarray,
    first: int,
) -> tuple[int, float]:
    """Dispatch to the task kind's ``rows``; returns ``(rows written, ‖rhs‖²)``."""
    kind = ints[record + h.R_KIND]
    if kind <= h.K_AXIS_ALIGN:
        return kind_mapped_frame.rows(ints, scalars, work, record, out, rhs, first)
    if kind == h.K_RELATIVE_FRAME:
        return kind_relative_frame.rows(ints, scalars, work, record, out, rhs, first)
    if kind == h.K_COM:
        return kind_com.rows(ints, scalars, work, record, out, rhs, first)
    if kind == h.K_EQUALITY:
        return kind_equality.rows(ints, scalars, work, record, out, rhs, first)
    return kind_joint_space.rows(ints, scalars, work, record, out, rhs, first)


@njit(cache=True, nogil=True)
def _residuals(ints: np.ndarray, scalars: np.ndarray, work: np.ndarray) -> tuple[int, float]:
    """First pass: rows of the residual tasks, diagonal errors; ``(segments, shift)``."""
    nv = ints[h.H_NV]
    capacity = ints[h.W_RES_ROWS]
    residual = work_matrix(ints, ints[h.W_RES], capacity, nv)
    rhs = work[ints[h.W_RES] + capacity * nv : ints[h.W_RES] + capacity * (nv + 1)]
    segments = int64s(ints[h.H_SEGMENTS], 4 * ints[h.H_NTASKS])
    shift = scalars[h.F_DAMPING]
    rows = counter()
    count = 0
    for t in range(ints[h.H_NTASKS]):
        record = ints[ints[h.H_TASKS] + t]
        kind = ints[record + h.R_KIND]
        if kind == h.K_POSTURE or kind == h.K_DAMPING:
            shift += kind_joint_space.diagonal(ints, scalars, work, record)
        elif kind != h.K_KINETIC_ENERGY:
            written, squared_norm = task_rows(ints, scalars, work, record, residual, rhs, rows)
            shift += scalars[ints[record + h.R_FLOATS] + 1] * squared_norm
            segments[4 * count] = rows
            segments[4 * count + 1] = written
            segments[4 * count + 2] = ints[record + h.R_COLUMNS]
            segments[4 * count + 3] = ints[record + h.R_NCOLUMNS]
            rows += written
            count += 1
    return count, shift


@njit(cache=True, nogil=True)
def objective(ints: np.ndarray, scalars: np.ndarray, work: np.ndarray) -> None:
    """Write :math:`H` and :math:`c` of the step into ``work`` (module docstring)."""
    nv = ints[h.H_NV]
    count, shift = _residuals(ints, scalars, work)
    hessian = work_matrix(ints, ints[h.W_H], nv, nv)
    gradient = work[ints[h.W_C] : ints[h.W_C] + nv]
    for i in range(nv):  # the upper triangle: mirror_upper writes the lower one
        hessian[i, i:] = 0.0
    gradient[:] = 0.0
    capacity = ints[h.W_RES_ROWS]
    residual = work_matrix(ints, ints[h.W_RES], capacity, nv)
    rhs = work[ints[h.W_RES] + capacity * nv : ints[h.W_RES] + capacity * (nv + 1)]
    segments = int64s(ints[h.H_SEGMENTS], 4 * ints[h.H_NTASKS])
    packed = work_matrix(ints, ints[h.W_GRAM], nv, ints[h.W_GRAM_ROWS])
    for s in range(count):
        columns = int32s(segments[4 * s + 2], segments[4 * s + 3])
        first, rows = segments[4 * s], segments[4 * s + 1]
        add_normal_equations(residual, rhs, first, rows, columns, hessian, gradient, packed)
    mirror_upper(hessian)
    gradient *= -1.0
    for t in range(ints[h.H_NTASKS]):
        record = ints[ints[h.H_TASKS] + t]
        kind = ints[record + h.R_KIND]
        if kind == h.K_POSTURE or kind == h.K_DAMPING:
            kind_joint_space.add_diagonal(ints, work, record, hessian, gradient)
    for t in range(ints[h.H_NTASKS]):
        record = ints[ints[h.H_TASKS] + t]
        if ints[record + h.R_KIND] == h.K_KINETIC_ENERGY:
            kind_kinetic_energy.add_dense(ints, scalars, work, record, hessian)
    for i in range(nv):
        hessian[i, i] += shift
