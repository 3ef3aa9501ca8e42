"""Laying out a plan: records into ``ints``/``floats``, buffers into ``work``.

Given the packed objects of one problem (tasks, then constraints, then limits), sizes
every buffer of the step from the rows each object may write (see
:mod:`~posekit.ik.compiled.header` for the slots) and fills the header but for the
function table and daqp's buffer, which the plan adds.
"""

from __future__ import annotations

import mujoco
import numpy as np

from posekit.ik.compiled import header as h
from posekit.ik.compiled import qp_kernel
from posekit.ik.compiled.mjdata_layout import efc_offsets
from posekit.ik.compiled.packing import Packed

_NO_RESIDUAL = (h.K_POSTURE, h.K_DAMPING, h.K_KINETIC_ENERGY)
_ROLE_SLOTS = (
    ("task", h.H_NTASKS, h.H_TASKS),
    ("constraint", h.H_NCONSTRAINTS, h.H_CONSTRAINTS),
    ("limit", h.H_NLIMITS, h.H_LIMITS),
)
JACOBIAN_SCRATCH_TAIL = 16  # doubles after 13 nv: quaternions, rotations, fromto


class Layout:
    """The arrays of one plan and where each record went.

    Attributes:
        ints, floats, work: The plan's arrays.
        placements: Per packed object, ``(record offset, float offset, diagonal slot)``.
        buffers: Other arrays the step uses (segments, sense, free), kept alive by the plan.
    """

    def __init__(self, model: mujoco.MjModel, packs: list[tuple[object, str, Packed]]) -> None:
        nv = model.nv
        roles = [role for _, role, _ in packs]
        ints: list[int] = [0] * h.HEADER_INTS
        floats: list[float] = [0.0] * h.HEADER_FLOATS
        for role, count_slot, list_slot in _ROLE_SLOTS:
            ints[count_slot] = roles.count(role)
            ints[list_slot] = len(ints)
            ints += [0] * roles.count(role)
        self.placements: list[tuple[int, int, int]] = []
        diagonal = 0
        residual_rows = qp_rows = largest = 0
        index = {
            "task": ints[h.H_TASKS],
            "constraint": ints[h.H_CONSTRAINTS],
            "limit": ints[h.H_LIMITS],
        }
        for _, role, packed in packs:
            slot = -1
            if role == "task" and packed.slot_index is not None:
                slot, diagonal = diagonal, diagonal + 1
                packed.ints[packed.slot_index] = slot
            record = len(ints)
            ints[index[role]] = record
            index[role] += 1
            self.placements.append((record, len(floats), slot))
            ints += packed.record(len(floats), weighted=role == "task")
            floats += packed.floats
            if role == "task" and packed.kind not in _NO_RESIDUAL:
                residual_rows += packed.rows
                largest = max(largest, packed.rows)
            elif role != "task":
                qp_rows += packed.rows
        dense = any(p.kind == h.K_KINETIC_ENERGY for _, _, p in packs)
        self.ints = np.array(ints, dtype=np.int64)
        self.floats = np.array(floats, dtype=np.float64)
        self._nv, self._qp_rows = nv, qp_rows
        self.ints[h.W_GRAM_ROWS] = largest
        self.work = np.zeros(self._work_layout(nv, residual_rows, qp_rows, diagonal, dense))
        segments = np.zeros(4 * max(1, roles.count("task")), dtype=np.int64)
        sense = np.zeros(nv + qp_rows, dtype=np.int32)
        free = np.zeros(max(1, nv), dtype=np.int64)
        self.buffers = [segments, sense, free]
        self.ints[h.H_FREE] = free.ctypes.data
        self.ints[h.H_SEGMENTS] = segments.ctypes.data
        self.ints[h.H_SENSE] = sense.ctypes.data
        self._header(model)

    def _work_layout(
        self, nv: int, residual_rows: int, qp_rows: int, diagonal: int, dense: bool
    ) -> int:
        """Assign the work slots; return the size of ``work``."""
        sizes = (
            (h.W_H, nv * nv),
            (h.W_C, nv),
            (h.W_RES, residual_rows * (nv + 1)),
            (h.W_JAC, 13 * nv + JACOBIAN_SCRATCH_TAIL),
            (h.W_QP, qp_kernel.area_size(nv, qp_rows)),
            (h.W_DIAG, diagonal * nv),
            (h.W_DENSE, nv * nv if dense else 0),
            (h.W_GRAM, self.ints[h.W_GRAM_ROWS] * nv),
            (h.W_GUESS, nv * nv + 2 * nv),
        )
        offset = 0
        for slot, size in sizes:
            self.ints[slot] = offset
            offset += size
        self.ints[h.W_RES_ROWS] = residual_rows
        self.ints[h.W_QP_ROWS] = qp_rows
        return max(offset, 1)

    def _header(self, model: mujoco.MjModel) -> None:
        ints = self.ints
        ints[h.H_MODEL] = model._address
        ints[h.H_NV], ints[h.H_NQ] = model.nv, model.nq
        ints[h.H_FLOATS], ints[h.H_NFLOATS] = self.floats.ctypes.data, self.floats.shape[0]
        ints[h.H_WORK], ints[h.H_NWORK] = self.work.ctypes.data, self.work.shape[0]
        ints[h.H_GEOM_AABB] = model.geom_aabb.ctypes.data
        ints[h.H_NGEOM], ints[h.H_NTENDON] = model.ngeom, model.ntendon
        ints[h.H_SPARSE] = int(mujoco.mj_isSparse(model))
        offsets = efc_offsets()
        if not isinstance(offsets, str):
            ints[h.H_EFC : h.H_EFC + offsets.shape[0]] = offsets

    def bind(self, data: mujoco.MjData) -> None:
        """Point the header at ``data``'s buffers (fixed for the life of ``data``)."""
        self.buffers += [data.qpos, data.subtree_com, data.xmat, data.geom_xpos, data.geom_xmat]
        ints = self.ints
        ints[h.H_DATA] = data._address
        ints[h.H_QPOS] = data.qpos.ctypes.data
        ints[h.H_SUBTREE_COM] = data.subtree_com.ctypes.data
        ints[h.H_XMAT] = data.xmat.ctypes.data
        ints[h.H_GEOM_XPOS] = data.geom_xpos.ctypes.data
        ints[h.H_GEOM_XMAT] = data.geom_xmat.ctypes.data

    def work_address(self, slot: int) -> int:
        """Address of the work buffer in ``slot`` (a ``W_*``)."""
        return int(self.work.ctypes.data + 8 * self.ints[slot])

    def solution_address(self) -> int:
        """Address of daqp's solution :math:`x` in the QP area."""
        offset = self.ints[h.W_QP] + qp_kernel.solution_offset(self._nv, self._qp_rows)
        return int(self.work.ctypes.data + 8 * offset)
