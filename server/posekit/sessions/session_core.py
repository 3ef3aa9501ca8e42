"""The core of a live session: its state under one lock, and the side the solve loop calls.

A :class:`SessionCore` holds the robot model, the configuration, the task stack and the
solver settings behind one lock, the revision (a counter of accepted changes), and the
stream of states and ``tasks`` messages to its watchers (a :class:`~posekit.sessions.feed.Feed`
and the :class:`~posekit.sessions.latest_state.LatestState`). It is what the solve loops
use (:class:`~posekit.sessions.loops.solve_loop.LoopSession`): the loop either steps it
(:meth:`~SessionCore.step`) or applies its changes to a mirror in a solver process and
hands the solved states back (:meth:`~SessionCore.adopt`). A step is
:func:`~posekit.sessions.step.solve_step`; its q is published in a
:class:`~posekit.sessions.state.SessionState`.

The editing API (tasks, limits, solver settings, q, specs, model reloads) is
:class:`~posekit.sessions.session.Session`, the one subclass: create sessions as
:class:`Session`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np

from posekit.ik.configuration import Configuration
from posekit.memory import note_freed
from posekit.sessions import changes
from posekit.sessions.built_spec import BuiltSpec
from posekit.sessions.caps import UNLIMITED, StackCaps
from posekit.sessions.feed import Feed
from posekit.sessions.latest_state import LatestState
from posekit.sessions.loops.solve_loop import SolveLoop, StreamCounters
from posekit.sessions.reload_report import ReloadReport
from posekit.sessions.session_spec import SessionSpec
from posekit.sessions.solver_settings import SolverSettings
from posekit.sessions.state import SessionState, Status, new_state
from posekit.sessions.step import StepSettings, solve_step, task_errors
from posekit.sessions.subscription import Encoding, SignalBatch, Subscription
from posekit.sessions.tasks_snapshot import TasksSnapshot

if TYPE_CHECKING:
    from posekit.sessions.session import Session


class SessionCore:
    """A live session's state and solve side (module docstring); its arguments are
    :class:`~posekit.sessions.session.Session`'s."""

    def __init__(
        self,
        session_id: str,
        spec: SessionSpec,
        model: mujoco.MjModel,
        entry: str,
        *,
        scheduler: SolveLoop | None = None,
        on_change: Callable[[Session], None] | None = None,
        caps: StackCaps = UNLIMITED,
    ) -> None:
        self.id = session_id
        self.robot = spec.robot
        self.entry = entry
        self.model = model
        self.created = time.time()
        self.last_used = time.monotonic()
        self.closed = False
        self.caps = caps
        self.last_reload: ReloadReport | None = None
        self._lock = threading.RLock()
        self._loop = scheduler
        self._on_change: Callable[[Any], None] | None = on_change  # called with a Session
        self._feed = Feed(on_encodings=self._encodings_changed)
        self.period = 0.0
        """Seconds between two solve steps (set with the solver settings; a plain
        attribute, as the solve loop reads it every step)."""
        self._take_solver(spec.solver)
        built = BuiltSpec.build(spec, model, entry, caps)
        self._configuration, self._stack = built.configuration, built.stack
        self._seq = 0
        self._ref: Any = None
        self._revision = 0
        status: Status = "paused" if self._solver.paused else "running"
        self._latest = LatestState(self._make_state(status, None, 0.0))
        self.encodings: frozenset[str] = frozenset()
        """As a mirror in a solver process: what to encode its states in, ahead."""

    # ================================================================ reading
    @property
    def state(self) -> SessionState:
        """The latest state (immutable)."""
        return self._latest.state

    @property
    def solver(self) -> SolverSettings:
        return self._solver

    def _take_solver(self, settings: SolverSettings) -> None:
        """Use ``settings`` from now on, with what each step reads of them as plain
        values (``_step_settings``, ``period``): the only way they are set."""
        self._solver = settings
        self._step_settings = StepSettings.of(settings)
        self.period = 1.0 / settings.rate_hz

    @property
    def revision(self) -> int:
        """Counter of accepted changes."""
        return self._revision

    def step_period(self) -> float:
        """The period [s] the server steps this session at now (its latest state's rate,
        lower when throttled or the loop is short of time for it); 0 when not known."""
        rate = self._latest.state.rate_hz
        return 1.0 / rate if rate > 0.0 else 0.0

    @property
    def watchers(self) -> int:
        """Number of live subscriptions."""
        return len(self._feed)

    def backlog(self) -> int:
        """The most updates any subscriber has not taken yet (bounded per subscriber)."""
        return self._feed.backlog()

    @property
    def q(self) -> np.ndarray:
        """A copy of the current configuration."""
        with self._lock:
            return self._synced().q

    def spec(self) -> SessionSpec:
        """The portable spec; creating a session from it restores this exact state."""
        with self._lock:
            return SessionSpec.model_construct(
                version=1,
                robot=self.robot,
                entry=self.entry,
                q=self._synced().data.qpos.tolist(),
                tasks=self._stack.task_specs(),
                limits=self._stack.limit_specs(),
                solver=self._solver,
            )

    def tasks_snapshot(self) -> TasksSnapshot:
        """The task stack, limits and solver settings (the websocket ``tasks`` message)."""
        with self._lock:
            return TasksSnapshot(
                self._revision, self._stack.task_specs(), self._stack.limit_specs(), self._solver
            )

    def touch(self) -> None:
        """Record a use of the session (idle sessions are unloaded by the manager)."""
        self.last_used = time.monotonic()

    # ========================================================= subscriptions
    def subscribe(
        self,
        loop: asyncio.AbstractEventLoop | None = None,
        initial_state: bool = True,
        encoding: Encoding | None = None,
    ) -> Subscription:
        """A latest-wins feed of states and ``tasks`` messages for an asyncio consumer.

        Call from the consumer's event loop (or pass it). The feed starts with the
        latest state unless ``initial_state`` is false.
        """
        initial = self._latest.state if initial_state else None
        return self._feed.subscribe(loop or asyncio.get_running_loop(), initial, encoding)

    def close(self, reason: str = "session deleted") -> None:
        """Stop solving and end every subscription; the heap is trimmed soon after
        (:func:`~posekit.memory.note_freed`: the session's memory is freed once the last
        reference to it goes)."""
        with self._lock:
            self.closed = True
            if self._loop is not None:
                self._loop.remove(self)
        self._feed.end(reason)
        note_freed()

    # ================================================================= solve
    def step(
        self,
        batch: SignalBatch | None = None,
        throttled: bool = False,
        rate_hz: float | None = None,
    ) -> SessionState:
        """Solve one step now and publish its state (the in-process solve loop calls it;
        without a loop, call it yourself). ``throttled``: the loop steps this session
        less often than its rate, at ``rate_hz`` (both reported in the state)."""
        own_batch = batch is None
        batch = batch or SignalBatch()
        with self._lock:
            if self.closed:
                return self._latest.state
            settings = self._step_settings
            if settings.paused:
                state = self._make_state("paused", None, 0.0)
            else:
                status, error, solve_us, errors, q = solve_step(
                    self._stack.plan(), self._configuration, settings
                )
                state = self._make_state(status, error, solve_us, errors, throttled, rate_hz, q)
            self._latest.publish(state)
        self._publish(state, batch)
        if own_batch:
            batch.flush()
        return state

    def adopt(self, state: SessionState, batch: SignalBatch) -> None:
        """Publish a state solved by a mirror of this session in a solver process.

        Its q becomes this session's q (applied lazily, see :meth:`_synced`). States
        older than the current one, and states solved before the latest change that set
        q (``set_q``, ``replace_spec``), are dropped: they would undo that change.
        """
        if not self.closed and self._latest.adopt(state):
            self._publish(state, batch)

    def fail(self, message: str) -> None:
        """Publish a ``failed`` state computed here: the session can no longer be solved."""
        with self._lock:
            self._synced()
            self._seq = max(self._seq, self._latest.state.seq)
            state = self._make_state("failed", message, 0.0)
            self._latest.publish(state)
        batch = SignalBatch()
        self._publish(state, batch)
        batch.flush()

    # =============================================================== mirrors
    def open_mirror(self, send: Callable[[SessionSpec, StreamCounters], None]) -> bool:
        """Call ``send`` with this session's spec and stream counters under its lock, so
        that the changes accepted after it are ordered after it; False when closed."""
        with self._lock:
            if self.closed:
                return False
            counters = StreamCounters(
                self._revision, self._latest.state.seq, self._ref, self._feed.encodings
            )
            send(self.spec(), counters)
            return True

    def continue_from(self, counters: StreamCounters) -> None:
        """Take over a session's stream counters (this session is its mirror)."""
        with self._lock:
            self._revision = counters.revision
            self._seq = counters.seq
            self._ref = counters.ref
            self.encodings = counters.encodings

    # =============================================================== helpers
    def _encodings_changed(self, encodings: frozenset[str]) -> None:
        """The watchers' encodings changed: the solve loop encodes states ahead in them."""
        if self._loop is not None:
            self._loop.encodings(self, encodings)

    def _publish(self, state: SessionState, batch: SignalBatch) -> None:
        """Offer a new state to every subscriber; a parked session is reported changed
        (its q is then saved)."""
        self._feed.offer_state(state, batch)
        if state.status != "running" and self._on_change is not None:
            self._on_change(self)

    def _synced(self) -> Configuration:
        """The configuration, with the latest solved q applied (lock held)."""
        q = self._latest.take_solved_q()
        if q is not None:
            self._configuration.update(np.asarray(q))
        return self._configuration

    def _q_set_by_next_change(self) -> None:
        """The next change sets q: states solved before it no longer carry q (lock held)."""
        self._latest.q_set_at(self._revision + 1)

    def _make_state(
        self,
        status: Status,
        error: str | None,
        solve_us: float,
        errors: dict[str, float | None] | None = None,
        throttled: bool = False,
        rate_hz: float | None = None,
        q: list[float] | None = None,
    ) -> SessionState:
        """The next state; ``errors`` and ``q`` (a step's) are read here when not given."""
        if errors is None:
            errors = task_errors(self._stack.plan(), self._configuration)
        self._seq += 1
        # Positional, and rounded by hand (both values are ≥ 0): keywords and round()
        # cost about 2 µs a state, a tenth of a compiled step.
        return new_state(
            self._seq,
            time.time(),
            self._configuration.data.qpos.tolist() if q is None else q,
            errors,
            status == "converged",
            status,
            error,
            int(solve_us * 10.0 + 0.5) / 10.0,
            self._ref,
            self._revision,
            throttled and status == "running",
            int((rate_hz or self._step_settings.rate_hz) * 100.0 + 0.5) / 100.0,
        )

    def _changed(self, change: changes.Change) -> None:
        """Record an accepted change (lock held): tell the loop and the subscribers."""
        self._revision += 1
        self.last_used = time.monotonic()  # touch(), inline: every moved target comes here
        if type(change) not in changes.MOVES:  # structural
            self._feed.offer_tasks(self.tasks_snapshot())
        if self._loop is not None:
            self._loop.changed(self, change)
        if self._on_change is not None:
            self._on_change(self)
