"""What a task or limit becomes in a compiled plan: its record, and the helpers to make one.

Each supported kind has a ``pack`` function (``object, PackContext → Packed``) next to
its kernel. A record holds integers (ids, addresses of the object's own arrays) and
scalars (gain, costs …). Arrays are pointed at, never copied, so in-place writes (a
setter writing its target buffer, ``task.cost[:3] = …``) reach the next step; the
plan keeps them alive. Re-packing an object gives a record of the same shape unless
something structural changed, which the plan then rebuilds for.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mujoco
import numpy as np

from posekit.ik.compiled import header


class NotCompiled(Exception):
    """This object (or this call) is not covered by the compiled path; the message says why."""


@dataclass(frozen=True)
class PackContext:
    """What packers may read: the configuration's model and data, and the object's role."""

    model: mujoco.MjModel
    data: mujoco.MjData
    constraint: bool
    """True for a task passed in ``constraints`` (hard equality rows)."""


@dataclass
class Packed:
    """One object's record: ints (after the common prefix), scalars and pointed-at arrays."""

    kind: int
    ints: list[int]
    floats: list[float]
    rows: int
    """Rows it writes at most (W, QP inequality or QP equality rows, by role)."""
    columns: np.ndarray
    """Sorted ``int32`` columns its rows can be non-zero on."""
    keep: list[np.ndarray] = field(default_factory=list)
    slot_index: int | None = None
    """Index in :attr:`ints` where the plan writes the block number of a diagonal task."""

    def record(self, float_offset: int, weighted: bool) -> list[int]:
        """The full ints record, its scalars starting at ``float_offset`` in ``floats``.

        ``weighted``: the record is an objective's (its rows are weighted by its cost).
        """
        prefix = [0] * header.R_FIRST
        prefix[header.R_KIND] = self.kind
        prefix[header.R_FLOATS] = float_offset
        prefix[header.R_COLUMNS] = self.columns.ctypes.data
        prefix[header.R_NCOLUMNS] = self.columns.shape[0]
        prefix[header.R_ROWS] = self.rows
        prefix[header.R_WEIGHTED] = int(weighted)
        return prefix + self.ints

    def shape(self) -> tuple[int, int, int, int]:
        """What must not change for the record to be patched in place."""
        return self.kind, len(self.ints), len(self.floats), self.rows


def vector_address(packed: Packed, value: object, size: int, what: str) -> int:
    """Address of ``value`` when it is a float64, C-contiguous vector of length ``size``.

    The array is kept alive by the record. Anything else (a list, integers, a strided
    view) is not pointed at: :class:`NotCompiled` names it.
    """
    if not (
        isinstance(value, np.ndarray)
        and value.dtype == np.float64
        and value.shape == (size,)
        and value.flags.c_contiguous
    ):
        shape = getattr(value, "shape", None)
        dtype = getattr(value, "dtype", type(value).__name__)
        raise NotCompiled(
            f"{what} is not a float64 vector of shape ({size},) (got {dtype}, shape {shape})"
        )
    packed.keep.append(value)
    return int(value.ctypes.data)


def scalar(value: object, what: str) -> float:
    """``value`` as a float, or :class:`NotCompiled`."""
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise NotCompiled(f"{what} is not a number: {value!r}") from None


def all_columns(nv: int) -> np.ndarray:
    """Every column ``0 … nv-1``."""
    return np.arange(nv, dtype=np.int32)


def chain_columns(model: mujoco.MjModel, body: int) -> np.ndarray:
    """Columns of the DoFs that move ``body``: those ``mj_jac`` can make non-zero.

    MuJoCo walks ``dof_parentid`` from the last DoF of the body (or of its closest
    ancestor with DoFs); every other column of the body's Jacobians is exactly zero.
    """
    while body > 0 and model.body_dofnum[body] == 0:
        body = int(model.body_parentid[body])
    dofs: list[int] = []
    if body > 0:
        dof = int(model.body_dofadr[body] + model.body_dofnum[body] - 1)
        while dof >= 0:
            dofs.append(dof)
            dof = int(model.dof_parentid[dof])
    return np.array(sorted(dofs), dtype=np.int32)


def merged_columns(*columns: np.ndarray) -> np.ndarray:
    """The sorted union of column sets."""
    return np.unique(np.concatenate(columns)).astype(np.int32)


FRAME_BODY_ATTR = {"body": None, "geom": "geom_bodyid", "site": "site_bodyid"}


def frame_body(model: mujoco.MjModel, frame_type: str, frame_id: int) -> int:
    """The body a body, geom or site frame is attached to."""
    attribute = FRAME_BODY_ATTR[frame_type]
    return frame_id if attribute is None else int(getattr(model, attribute)[frame_id])
