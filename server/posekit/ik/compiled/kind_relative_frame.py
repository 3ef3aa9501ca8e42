r"""Compiled relative frame task: the pose of frame :math:`b` in root frame :math:`r`.

As :class:`~posekit.ik.tasks.RelativeFrameTask`: with :math:`T_{rb} = T_{0r}^{-1} T_{0b}`
and the target :math:`T_{rt}`,

.. math:: e = \log(T_{rt}^{-1} T_{rb}) = \log(T_{tb}), \qquad
          J = J_{\log}(T_{tb})\,\big({}_bJ_b - \mathrm{Ad}_{T_{rb}^{-1}}\,{}_rJ_r\big),

with the body Jacobians :math:`{}_bJ_b = \mathrm{diag}(R_b^T, R_b^T)[J_p; J_r]` of both
frames ([m], [rad]). Frame poses are read as the Python path reads them: a body's
``xquat``, a geom's or site's rotation matrix through ``mju_mat2Quat``.

Record: per frame (regulated, then root) the jac function slot, id, rotation,
position and quaternion addresses (0: convert the rotation); the target and cost
addresses. Scalars ``(gain, lm_damping)``. :func:`error_norm` reports
:math:`\|e\|` without the Jacobians.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from posekit.ik.compiled import header as h
from posekit.ik.compiled.native import call_v_pp, call_v_ppppi, floats, int32s
from posekit.ik.compiled.packing import (
    PackContext,
    Packed,
    chain_columns,
    frame_body,
    merged_columns,
    scalar,
    vector_address,
)
from posekit.ik.compiled.rows import euclidean_norm
from posekit.ik.compiled.symbols import (
    FN_JAC_BODY,
    FN_JAC_GEOM,
    FN_JAC_SITE,
    FN_MAT2QUAT,
    FN_QUAT2MAT,
)
from posekit.ik.compiled.views import work_matrix, work_vector
from posekit.ik.frames import FRAME_TO_POS_ATTR, FRAME_TO_XMAT_ATTR
from posekit.ik.lie.pose_kernels import Pose, compose, invert
from posekit.ik.lie.utils import mat3_mul, se3_log_jlog_floats
from posekit.ik.tasks import RelativeFrameTask

_JACOBIAN = {"body": FN_JAC_BODY, "geom": FN_JAC_GEOM, "site": FN_JAC_SITE}
FRAME_SLOTS = 5  # jac slot, id, rotation, position, quaternion (0 = from the rotation)
M_FRAME = h.R_FIRST
M_ROOT = h.R_FIRST + FRAME_SLOTS
M_TARGET = h.R_FIRST + 2 * FRAME_SLOTS
M_COST = M_TARGET + 1


def _frame_slots(context: PackContext, frame_type: str, frame_id: int, keep: list) -> list[int]:
    data = context.data
    rotation = getattr(data, FRAME_TO_XMAT_ATTR[frame_type])[frame_id]
    position = getattr(data, FRAME_TO_POS_ATTR[frame_type])[frame_id]
    quaternion = data.xquat[frame_id] if frame_type == "body" else None
    keep += [rotation, position] + ([quaternion] if quaternion is not None else [])
    return [
        _JACOBIAN[frame_type],
        frame_id,
        int(rotation.ctypes.data),
        int(position.ctypes.data),
        0 if quaternion is None else int(quaternion.ctypes.data),
    ]


def pack(task: RelativeFrameTask, context: PackContext) -> Packed:
    """The record of a relative frame task (module docstring)."""
    model = context.model
    frame_id, root_id = task.frame_id_in(model), task.root_id_in(model)
    target = task.kernel_target()
    columns = merged_columns(
        chain_columns(model, frame_body(model, task.frame_type, frame_id)),
        chain_columns(model, frame_body(model, task.root_type, root_id)),
    )
    packed = Packed(h.K_RELATIVE_FRAME, [], [], 6, columns, [columns])
    packed.ints = [
        *_frame_slots(context, task.frame_type, frame_id, packed.keep),
        *_frame_slots(context, task.root_type, root_id, packed.keep),
        vector_address(packed, target, 7, "RelativeFrameTask's target"),
        vector_address(packed, task.cost, 6, "RelativeFrameTask.cost"),
    ]
    packed.floats = [scalar(task.gain, "gain"), scalar(task.lm_damping, "lm_damping")]
    return packed


@njit(cache=True, nogil=True)
def _pose(ints: np.ndarray, slot: int, small: int) -> Pose:
    """The frame's world pose ``wxyz_xyz`` as the Python path reads it (module docstring)."""
    quaternion_address = ints[slot + 4]
    if quaternion_address == 0:
        call_v_pp(ints[h.H_FN + FN_MAT2QUAT], small, ints[slot + 2])
        quaternion_address = small
    q = floats(quaternion_address, 4)
    p = floats(ints[slot + 3], 3)
    return (q[0], q[1], q[2], q[3], p[0], p[1], p[2])


@njit(cache=True, nogil=True)
def _logarithm(ints: np.ndarray, record: int, frame_in_root: Pose) -> tuple:
    r""":math:`(\log T_{tb},\ M,\ P)` of :math:`T_{tb} = T_{rt}^{-1} T_{rb}` (``se3_log_jlog_floats``)."""
    t = floats(ints[record + M_TARGET], 7)
    target = (t[0], t[1], t[2], t[3], t[4], t[5], t[6])
    return se3_log_jlog_floats(*compose(invert(target), frame_in_root))


@njit(cache=True, nogil=True)
def error_norm(ints: np.ndarray, record: int) -> float:
    r""":math:`\|\log(T_{tb})\|` at the frames' poses in ``mjData`` (``compute_error``'s norm)."""
    small = ints[h.H_WORK] + 8 * (ints[h.W_JAC] + 13 * ints[h.H_NV])
    frame = _pose(ints, record + M_FRAME, small)
    root = _pose(ints, record + M_ROOT, small)
    tangent, _, _ = _logarithm(ints, record, compose(invert(root), frame))
    return euclidean_norm(tangent)


@njit(cache=True, nogil=True)
def _pose_and_body_jacobian(ints: np.ndarray, slot: int, jacobian: np.ndarray, small: int) -> Pose:
    """The frame's pose; its body Jacobian ``diag(Rᵀ, Rᵀ)[J_p; J_r]`` written into ``jacobian``."""
    nv = ints[h.H_NV]
    call_v_ppppi(
        ints[h.H_FN + ints[slot]],
        ints[h.H_MODEL],
        ints[h.H_DATA],
        jacobian.ctypes.data,
        jacobian.ctypes.data + 8 * 3 * nv,
        ints[slot + 1],
    )
    r = floats(ints[slot + 2], 9)
    for block in range(2):
        for c in range(nv):
            x, y, z = jacobian[3 * block, c], jacobian[3 * block + 1, c], jacobian[3 * block + 2, c]
            for i in range(3):
                jacobian[3 * block + i, c] = r[i] * x + r[3 + i] * y + r[6 + i] * z
    return _pose(ints, slot, small)


@njit(cache=True, nogil=True)
def _adjoint_blocks(ints: np.ndarray, pose: Pose, small: int) -> tuple:
    r"""Blocks :math:`R` and :math:`[t]_\times R` of :math:`\mathrm{Ad}_T` (9 floats each)."""
    buffer = floats(small, 13)
    buffer[9] = pose[0]
    buffer[10] = pose[1]
    buffer[11] = pose[2]
    buffer[12] = pose[3]
    call_v_pp(ints[h.H_FN + FN_QUAT2MAT], small, small + 8 * 9)
    r = (buffer[0], buffer[1], buffer[2], buffer[3], buffer[4], buffer[5], buffer[6],
         buffer[7], buffer[8])  # fmt: skip
    tx, ty, tz = pose[4], pose[5], pose[6]
    skew = (0.0, -tz, ty, tz, 0.0, -tx, -ty, tx, 0.0)
    return r, mat3_mul(skew, r)


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
    """Write the task's 6 rows from ``first``; return ``(6, ‖rhs‖²)``."""
    weighted = ints[record + h.R_WEIGHTED] != 0
    nv = ints[h.H_NV]
    start = ints[h.W_JAC]
    frame_jacobian = work_matrix(ints, start, 6, nv)
    root_jacobian = work_matrix(ints, start + 6 * nv, 6, nv)
    small = ints[h.H_WORK] + 8 * (start + 13 * nv)
    frame = _pose_and_body_jacobian(ints, record + M_FRAME, frame_jacobian, small)
    root = _pose_and_body_jacobian(ints, record + M_ROOT, root_jacobian, small)
    frame_in_root = compose(invert(root), frame)
    tangent, m, p = _logarithm(ints, record, frame_in_root)
    n = mat3_mul(p, m)
    r, tr = _adjoint_blocks(ints, invert(frame_in_root), small)
    gain = scalars[ints[record + h.R_FLOATS]]
    cost = floats(ints[record + M_COST], 6)
    columns = int32s(ints[record + h.R_COLUMNS], ints[record + h.R_NCOLUMNS])
    squared_norm = 0.0
    for i in range(6):
        weight = cost[i] if weighted else 1.0
        value = -gain * weight * tangent[i]
        rhs[first + i] = value
        squared_norm += value * value
        out[first + i, :] = 0.0
    rel = work_vector(ints, start + 12 * nv, 6)
    for c in columns:
        jr = root_jacobian[:, c]
        for i in range(3):
            moved = r[3 * i] * jr[0] + r[3 * i + 1] * jr[1] + r[3 * i + 2] * jr[2]
            moved += tr[3 * i] * jr[3] + tr[3 * i + 1] * jr[4] + tr[3 * i + 2] * jr[5]
            rel[i] = frame_jacobian[i, c] - moved
            turned = r[3 * i] * jr[3] + r[3 * i + 1] * jr[4] + r[3 * i + 2] * jr[5]
            rel[3 + i] = frame_jacobian[3 + i, c] - turned
        for i in range(3):
            top = m[3 * i] * rel[0] + m[3 * i + 1] * rel[1] + m[3 * i + 2] * rel[2]
            top -= n[3 * i] * rel[3] + n[3 * i + 1] * rel[4] + n[3 * i + 2] * rel[5]
            bottom = m[3 * i] * rel[3] + m[3 * i + 1] * rel[4] + m[3 * i + 2] * rel[5]
            out[first + i, c] = (cost[i] if weighted else 1.0) * top
            out[first + 3 + i, c] = (cost[3 + i] if weighted else 1.0) * bottom
    return 6, squared_norm
