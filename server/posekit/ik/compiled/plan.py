"""A compiled plan: one IK problem's records and buffers, and its one-call step.

Built once per (configuration, tasks, limits, constraints, ``dt``, ``damping``): every
object is packed (:mod:`~posekit.ik.compiled.kinds`), the arrays are laid out
(:mod:`~posekit.ik.compiled.header`) and daqp's structs filled
(:mod:`~posekit.ik.compiled.daqp_call`). The plan observes its objects: a public
attribute assigned on one of them (``set_cost``, ``task.gain = …``) re-packs that
object's record in place before the next step (a patch); a change of shape (more rows,
another kind) rebuilds the plan. Targets need neither: setters write them in place
into the buffers the records point at.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import mujoco
import numpy as np

from posekit.ik.compiled import header as h
from posekit.ik.compiled import qp_kernel
from posekit.ik.compiled.advance_kernel import NOT_COMPILED, advance_entry
from posekit.ik.compiled.configuration_kernel import ISSUED
from posekit.ik.compiled.daqp_call import daqp_buffer
from posekit.ik.compiled.error_kernel import error_norms as write_error_norms
from posekit.ik.compiled.kinds import pack_limit, pack_task
from posekit.ik.compiled.layout import Layout
from posekit.ik.compiled.packing import NotCompiled, PackContext, Packed
from posekit.ik.compiled.step_kernel import step_entry
from posekit.ik.compiled.symbols import availability, native_libraries
from posekit.ik.limits.limit import Bounds
from posekit.ik.qp import QuadraticProgram, check_step_settings


@dataclass
class _Entry:
    """Where one object's record lives, to patch it in place."""

    source: object
    role: str  # "task", "constraint" or "limit"
    record: int
    floats: int
    shape: tuple[int, int, int, int]
    slot: int  # block of a diagonal task's weighted errors, -1 for none
    keep: list[np.ndarray] = field(default_factory=list)


class Plan:
    """The compiled form of one IK problem (module docstring)."""

    def __init__(
        self,
        model: mujoco.MjModel,
        data: mujoco.MjData,
        tasks: Sequence[object],
        limits: Sequence[object],
        constraints: Sequence[object],
        dt: float,
        damping: float,
    ) -> None:
        check_step_settings(dt, damping)
        self._model, self._data = model, data
        self._sources = (tuple(tasks), tuple(constraints), tuple(limits))
        self._dt, self._damping = float(dt), float(damping)
        self._stale = False
        self._reason: str | None = None
        self.builds = 0
        """How many times the plan was laid out (1 + rebuilds after a change of shape)."""
        self._ints = np.zeros(0, dtype=np.int64)
        self._velocity = np.zeros(model.nv)
        self._build()
        for source in {id(s): s for group in self._sources for s in group}.values():
            source.add_observer(self)  # type: ignore[attr-defined]

    @property
    def reason(self) -> str | None:
        """Why this problem takes the Python path (``None``: compiled), as of now."""
        if self._stale:
            self._refresh()
        return self._reason

    @property
    def stale(self) -> bool:
        """Whether a change of one of its objects awaits the next step (a patch)."""
        return self._stale

    # ------------------------------------------------------------------ observer
    def changed(self, source: object) -> None:
        """A public attribute of ``source`` was assigned: re-read it before the next step."""
        self._stale = True
        self._changed.add(id(source))

    # --------------------------------------------------------------------- step
    def solve(self) -> np.ndarray | None:
        """:math:`v = \\Delta q / \\Delta t` of one step, or ``None``: take the Python path.

        ``None`` when :attr:`reason` is set, and when daqp found no solution (or a
        non-finite one): the Python path then solves the step again, with its
        square-root re-solve (:mod:`posekit.ik.qp_sqrt`), and raises what it raises.
        """
        if self._stale:
            self._refresh()
        if self._reason is not None:
            return None
        if self._step(self._address) < 1:
            return None
        velocity = ISSUED[0] = self._velocity.copy()
        return velocity

    def advance(self, tolerance: float) -> int:
        """Solve one step and move the configuration by it, unless it is below
        ``tolerance`` [rad|m] (:math:`\\max_i |v_i| \\Delta t`), then write every task's
        error norm: one compiled call (:mod:`~posekit.ik.compiled.advance_kernel`).

        Returns the kernel's outcome (``ADVANCED``, ``CONVERGED``, ``NO_SOLUTION``,
        ``Q_NOT_FINITE``), or ``NOT_COMPILED`` when :attr:`reason` is set. After
        ``ADVANCED`` or ``CONVERGED``, :meth:`last_norms` holds the norms; otherwise
        ``qpos`` and the kinematics are as they were. ``qpos`` moves behind the
        :class:`~posekit.ik.configuration.Configuration`'s back: tell it
        (``kinematics_changed``).
        """
        if self._stale:
            self._refresh()
        if self._reason is not None:
            return NOT_COMPILED
        return self._advance(self._address, self._norms, tolerance)

    def last_norms(self) -> list[float]:
        """The error norms the last :meth:`advance` (or :meth:`error_norms`) wrote, in
        :meth:`error_norms`'s order."""
        return self._norms.tolist()

    def error_norms(self) -> np.ndarray | None:
        r"""Every task's :math:`\|e_i\|` at the kinematics in ``mjData``, or ``None``.

        In the plan's order: the objectives, then the constraints, each in the order
        they were given (``solve_ik``'s ``tasks``, then ``constraints``). :math:`e_i` is
        the task's unweighted ``compute_error`` (:mod:`~posekit.ik.compiled.error_kernel`);
        a kinetic-energy task, which has none, gets ``NaN``. ``None`` when :attr:`reason`
        is set: ask the tasks themselves. One compiled call, no Jacobians; read after
        ``integrate_inplace`` or ``Configuration.update``, which keep the kinematics
        current.
        """
        if self._stale:
            self._refresh()
        if self._reason is not None:
            return None
        write_error_norms(self._ints, self._norms)
        return self._norms.copy()

    def header(self) -> np.ndarray:
        """The plan's ``ints`` (header and records), to time its kernels in isolation.

        ``bench/ik_breakdown.py`` runs parts of the step on it; writing into it breaks
        the plan.
        """
        return self._ints

    def qp_addresses(self) -> tuple[int, int, int, int, int]:
        """Addresses of the QP's rows, ``bupper``, ``blower``, ``sense`` and ``lam``."""
        ints, nv = self._ints, self._model.nv
        start = int(self._work.ctypes.data) + 8 * int(ints[h.W_QP])
        return qp_kernel.area_addresses(start, nv, int(ints[h.W_QP_ROWS]), int(ints[h.H_SENSE]))

    @property
    def guessed(self) -> bool:
        """Whether the last step's QP was solved on the guessed active set, without daqp
        (:mod:`~posekit.ik.compiled.active_set_guess`)."""
        return bool(self._ints[h.H_GUESSED])

    def last_qp(self) -> QuadraticProgram:
        """The QP of the last step (copies), as the Python path's ``assemble_qp`` gives it.

        For diagnostics and tests: ``H``, ``c``, the simple bounds (when any limit has
        some), the inequality rows ``G, h`` and equality rows ``A, b`` (``None`` when
        there are none).
        """
        ints, work, nv = self._ints, self._work, self._model.nv
        hessian = work[ints[h.W_H] : ints[h.W_H] + nv * nv].reshape(nv, nv).copy()
        gradient = work[ints[h.W_C] : ints[h.W_C] + nv].copy()
        view = qp_kernel.area_views(work[ints[h.W_QP] :], nv, int(ints[h.W_QP_ROWS]))
        program = QuadraticProgram(hessian, gradient)
        inequalities, equalities = int(ints[h.H_ROWS_G]), int(ints[h.H_ROWS_A])
        if bool(ints[h.H_HAVE_BOUNDS]):
            program.bounds = Bounds(view.lower.copy(), view.upper.copy())
        if inequalities:
            program.G = view.rows[:inequalities].copy()
            program.h = view.rhs[:inequalities].copy()
        if equalities:
            program.A = view.rows[inequalities : inequalities + equalities].copy()
            program.b = view.rhs[inequalities : inequalities + equalities].copy()
        return program

    # -------------------------------------------------------------------- build
    def _packs(self) -> list[tuple[object, str, Packed]]:
        objective = PackContext(self._model, self._data, constraint=False)
        constraint = PackContext(self._model, self._data, constraint=True)
        tasks, constraints, limits = self._sources
        return [
            *((task, "task", pack_task(task, objective)) for task in tasks),
            *((task, "constraint", pack_task(task, constraint)) for task in constraints),
            *((limit, "limit", pack_limit(limit, objective)) for limit in limits),
        ]

    def _build(self) -> None:
        self.builds += 1
        self._changed: set[int] = set()
        unavailable = availability()
        if unavailable is not None:
            self._reason = unavailable
            return
        try:
            packs = self._packs()
        except NotCompiled as reason:
            self._reason = str(reason)
            return
        self._reason = None
        self._step = step_entry()
        self._advance = advance_entry()
        layout = Layout(self._model, packs)
        self._ints, self._floats, self._work = layout.ints, layout.floats, layout.work
        self._floats[h.F_DAMPING] = self._damping
        self._floats[h.F_DT] = self._dt
        self._entries = [
            _Entry(source, role, record, offset, packed.shape(), slot, packed.keep)
            for (source, role, packed), (record, offset, slot) in zip(
                packs, layout.placements, strict=True
            )
        ]
        self._buffers = layout.buffers
        self._norms = np.zeros(len(self._sources[0]) + len(self._sources[1]))
        libraries = native_libraries()
        self._ints[h.H_FN : h.H_FN + libraries.functions.shape[0]] = libraries.functions
        self._daqp = daqp_buffer(
            libraries.daqp_settings,
            self._model.nv,
            layout.work_address(h.W_H),
            layout.work_address(h.W_C),
            layout.solution_address(),
        )
        self._ints[h.H_DAQP] = self._daqp.ctypes.data
        self._ints[h.H_NINTS] = self._ints.shape[0]
        self._ints[h.H_VELOCITY] = self._velocity.ctypes.data
        self._address = int(self._ints.ctypes.data)
        layout.bind(self._data)

    def _refresh(self) -> None:
        """Re-pack the changed objects in place, or rebuild when their shape changed."""
        changed, self._changed, self._stale = self._changed, set(), False
        if self._reason is not None or not hasattr(self, "_entries"):
            self._build()
            return
        try:
            for entry in self._entries:
                if id(entry.source) in changed and not self._patch(entry):
                    self._build()
                    return
        except NotCompiled as reason:
            self._reason = str(reason)

    def _patch(self, entry: _Entry) -> bool:
        """Write ``entry``'s new record over the old one; False when its shape changed."""
        context = PackContext(self._model, self._data, constraint=entry.role == "constraint")
        pack = pack_limit if entry.role == "limit" else pack_task
        packed = pack(entry.source, context)
        if packed.shape() != entry.shape:
            return False
        if packed.slot_index is not None:
            packed.ints[packed.slot_index] = entry.slot
        record = packed.record(entry.floats, weighted=entry.role == "task")
        self._ints[entry.record : entry.record + len(record)] = record
        self._floats[entry.floats : entry.floats + len(packed.floats)] = packed.floats
        entry.keep = packed.keep
        return True
