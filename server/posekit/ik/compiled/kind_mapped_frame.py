r"""Compiled frame, look-at and axis-align tasks: :math:`J = L\,[J_p; J_r]` on one frame.

Per step: MuJoCo's world Jacobian of the frame (``mj_jacBody``/``Geom``/``Site``), then
the task's error and ``k × 6`` map :math:`L` from the very functions the Python path
uses (:func:`~posekit.ik.tasks.frame_residual.frame_error_and_map`,
:func:`~posekit.ik.tasks.pointing_residual.look_at_error_and_map`,
:func:`~posekit.ik.tasks.pointing_residual.axis_align_error_and_map`), then the rows
(:func:`~posekit.ik.compiled.frame_rows.frame_rows` for a frame task's six,
:func:`~posekit.ik.compiled.rows.mapped_rows` for the others' three). :func:`error_norm` reports
:math:`\|e\|` from the same functions, without the Jacobian.

Record: jac function slot, frame id, addresses of the frame's rotation (9) and
position (3) in ``mjData``, of the two kernel targets and of the cost; scalars
``(gain, lm_damping)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from posekit.ik.compiled import header as h
from posekit.ik.compiled.frame_rows import frame_rows
from posekit.ik.compiled.native import call_v_ppppi, floats, int32s
from posekit.ik.compiled.packing import (
    PackContext,
    Packed,
    chain_columns,
    frame_body,
    scalar,
    vector_address,
)
from posekit.ik.compiled.rows import euclidean_norm, mapped_rows
from posekit.ik.compiled.symbols import FN_JAC_BODY, FN_JAC_GEOM, FN_JAC_SITE
from posekit.ik.compiled.views import work_matrix
from posekit.ik.frames import FRAME_TO_POS_ATTR, FRAME_TO_XMAT_ATTR
from posekit.ik.tasks import AxisAlignTask, FrameTask, LookAtTask
from posekit.ik.tasks.frame_residual import frame_error_and_map
from posekit.ik.tasks.mapped_task import MappedFrameTask
from posekit.ik.tasks.pointing_residual import axis_align_error_and_map, look_at_error_and_map

KINDS: dict[type, int] = {
    FrameTask: h.K_FRAME,
    LookAtTask: h.K_LOOK_AT,
    AxisAlignTask: h.K_AXIS_ALIGN,
}
_JACOBIAN = {"body": FN_JAC_BODY, "geom": FN_JAC_GEOM, "site": FN_JAC_SITE}

# kind-specific slots
M_JAC = h.R_FIRST
M_FRAME = h.R_FIRST + 1
M_ROTATION = h.R_FIRST + 2
M_POSITION = h.R_FIRST + 3
M_TARGET_A = h.R_FIRST + 4
M_TARGET_B = h.R_FIRST + 5
M_COST = h.R_FIRST + 6


def pack(task: MappedFrameTask, context: PackContext) -> Packed:
    """The record of a frame, look-at or axis-align task (module docstring)."""
    model, data = context.model, context.data
    frame_type = task.frame_type
    frame_id = task.frame_id_in(model)
    target_a, target_b = task.kernel_targets()
    rotation = getattr(data, FRAME_TO_XMAT_ATTR[frame_type])[frame_id]
    position = getattr(data, FRAME_TO_POS_ATTR[frame_type])[frame_id]
    columns = chain_columns(model, frame_body(model, frame_type, frame_id))
    packed = Packed(KINDS[type(task)], [], [], task.k, columns, [columns, rotation, position])
    packed.ints = [
        _JACOBIAN[frame_type],
        frame_id,
        int(rotation.ctypes.data),
        int(position.ctypes.data),
        vector_address(packed, target_a, target_a.shape[0], "the task's target"),
        vector_address(packed, target_b, 3, "the task's target"),
        vector_address(packed, task.cost, task.k, f"{type(task).__name__}.cost"),
    ]
    packed.floats = [scalar(task.gain, "gain"), scalar(task.lm_damping, "lm_damping")]
    return packed


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
    """Write the task's rows from ``first`` (zero-cost ones left out); return ``(rows, ‖rhs‖²)``."""
    weighted = ints[record + h.R_WEIGHTED] != 0
    nv = ints[h.H_NV]
    scratch = ints[h.H_WORK] + 8 * ints[h.W_JAC]
    call_v_ppppi(
        ints[h.H_FN + ints[record + M_JAC]],
        ints[h.H_MODEL],
        ints[h.H_DATA],
        scratch,
        scratch + 8 * 3 * nv,
        ints[record + M_FRAME],
    )
    world_jacobian = work_matrix(ints, ints[h.W_JAC], 6, nv)
    rotation = floats(ints[record + M_ROTATION], 9)
    position = floats(ints[record + M_POSITION], 3)
    kind = ints[record + h.R_KIND]
    gain = scalars[ints[record + h.R_FLOATS]]
    columns = int32s(ints[record + h.R_COLUMNS], ints[record + h.R_NCOLUMNS])
    target_b = floats(ints[record + M_TARGET_B], 3)
    if kind == h.K_FRAME:
        cost = floats(ints[record + M_COST], 6)
        target_a = floats(ints[record + M_TARGET_A], 9)
        error, jacobian_map = frame_error_and_map(target_a, target_b, rotation, position)
        return frame_rows(
            error, jacobian_map, world_jacobian, cost, weighted, gain, out, rhs, first, columns
        )
    cost = floats(ints[record + M_COST], 3)
    target_a = floats(ints[record + M_TARGET_A], 3)
    if kind == h.K_LOOK_AT:
        error3, map3 = look_at_error_and_map(target_a, target_b, rotation, position)
    else:
        error3, map3 = axis_align_error_and_map(target_a, target_b, rotation, position)
    return mapped_rows(error3, map3, world_jacobian, cost, weighted, gain, out, rhs, first, columns)


@njit(cache=True, nogil=True)
def error_norm(ints: np.ndarray, record: int) -> float:
    r""":math:`\|e\|` of the task at the frame's pose in ``mjData`` (``compute_error``'s norm)."""
    rotation = floats(ints[record + M_ROTATION], 9)
    position = floats(ints[record + M_POSITION], 3)
    target_b = floats(ints[record + M_TARGET_B], 3)
    kind = ints[record + h.R_KIND]
    if kind == h.K_FRAME:
        target_a = floats(ints[record + M_TARGET_A], 9)
        error, _ = frame_error_and_map(target_a, target_b, rotation, position)
        return euclidean_norm(error)
    target_a = floats(ints[record + M_TARGET_A], 3)
    if kind == h.K_LOOK_AT:
        error3, _ = look_at_error_and_map(target_a, target_b, rotation, position)
    else:
        error3, _ = axis_align_error_and_map(target_a, target_b, rotation, position)
    return euclidean_norm(error3)
