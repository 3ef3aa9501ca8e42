r"""Compiled kinetic-energy regularisation: :math:`H \mathrel{+}= \lambda M(q) / \Delta t^2`.

As :class:`~posekit.ik.tasks.KineticEnergyRegularizationTask`: ``mj_crb`` then
``mj_fullM`` give the joint-space inertia :math:`M` (SI units), scaled by
:math:`\lambda / \Delta t^2` with the task's own timestep. It has no residual form, and
no constraint form. Scalars ``(cost, dt)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from posekit.ik.compiled import header as h
from posekit.ik.compiled.native import call_v_pp, call_v_ppp
from posekit.ik.compiled.packing import NotCompiled, PackContext, Packed, all_columns, scalar
from posekit.ik.compiled.symbols import FN_CRB, FN_FULL_M
from posekit.ik.compiled.views import work_matrix
from posekit.ik.exceptions import IntegrationTimestepNotSet
from posekit.ik.tasks import KineticEnergyRegularizationTask


def pack(task: KineticEnergyRegularizationTask, context: PackContext) -> Packed:
    """The record of a kinetic-energy task (module docstring)."""
    if context.constraint:
        raise NotCompiled("a KineticEnergyRegularizationTask has no constraint rows")
    if task.dt is None:
        raise IntegrationTimestepNotSet(type(task).__name__)
    columns = all_columns(context.model.nv)
    packed = Packed(h.K_KINETIC_ENERGY, [], [], 0, columns, [columns])
    packed.floats = [scalar(task.cost, "cost"), scalar(task.dt, "dt")]
    return packed


@njit(cache=True, nogil=True)
def add_dense(
    ints: np.ndarray, scalars: np.ndarray, work: np.ndarray, record: int, hessian: np.ndarray
) -> None:
    r""":math:`H \mathrel{+}= (\lambda / \Delta t^2)\, M(q)`."""
    nv = ints[h.H_NV]
    start = ints[h.W_DENSE]
    call_v_pp(ints[h.H_FN + FN_CRB], ints[h.H_MODEL], ints[h.H_DATA])
    call_v_ppp(
        ints[h.H_FN + FN_FULL_M], ints[h.H_MODEL], ints[h.H_DATA], ints[h.H_WORK] + 8 * start
    )
    inertia = work_matrix(ints, start, nv, nv)
    base = ints[record + h.R_FLOATS]
    scale = scalars[base] / (scalars[base + 1] * scalars[base + 1])
    for i in range(nv):
        for j in range(nv):
            hessian[i, j] += inertia[i, j] * scale
