r"""Every task's error norm :math:`\|e_i\|` in one compiled call, without Jacobians.

:math:`e_i` is the unweighted error of the task's ``compute_error``: the frame task's
body twist :math:`\log(T_{bt})`, the relative frame task's :math:`\log(T_{tb})`, the
look-at and axis-align errors, :math:`c(q) - c^*`, the posture error
:math:`(q \ominus q^*) \odot m`, the selected equalities' residuals, and zero for
damping and DoF freezing tasks. A kinetic-energy task has no error vector: ``NaN``.

Read at the kinematics in ``mjData`` (``Configuration.update`` and
``integrate_inplace`` keep poses and ``subtree_com`` current); equality rows are made
afresh (``mj_makeConstraint``). Norms are written in the plan's order: objectives,
then constraints, each in the order given to the plan.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from posekit.ik.compiled import header as h
from posekit.ik.compiled import (
    kind_com,
    kind_equality,
    kind_joint_space,
    kind_mapped_frame,
    kind_relative_frame,
)


@njit(cache=True, nogil=True)
def task_error_norm(ints: np.ndarray, record: int) -> float:
    """Dispatch to the task kind's ``error_norm``; ``NaN`` for a kinetic-energy task."""
    kind = ints[record + h.R_KIND]
    if kind <= h.K_AXIS_ALIGN:
        return kind_mapped_frame.error_norm(ints, record)
    if kind == h.K_RELATIVE_FRAME:
        return kind_relative_frame.error_norm(ints, record)
    if kind == h.K_COM:
        return kind_com.error_norm(ints, record)
    if kind == h.K_EQUALITY:
        return kind_equality.error_norm(ints, record)
    if kind == h.K_KINETIC_ENERGY:
        return math.nan
    return kind_joint_space.error_norm(ints, record)


@njit(cache=True, nogil=True)
def error_norms(ints: np.ndarray, out: np.ndarray) -> None:
    """Write :math:`\\|e_i\\|` of the plan's objectives, then constraints, into ``out``."""
    ints[h.H_EFC_READY] = 0  # q may have moved since the constraint rows were made
    objectives = ints[h.H_NTASKS]
    for t in range(objectives):
        out[t] = task_error_norm(ints, ints[ints[h.H_TASKS] + t])
    for c in range(ints[h.H_NCONSTRAINTS]):
        out[objectives + c] = task_error_norm(ints, ints[ints[h.H_CONSTRAINTS] + c])
