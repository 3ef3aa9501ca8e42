"""A live IK session: a configuration, a task stack, solver settings, a revision and a feed.

Every public method is thread-safe and validates its input completely before it
touches the session (the :class:`~posekit.sessions.stack.TaskStack` validates, then
swaps), so a rejected change leaves the session exactly as it was. Each accepted change
becomes a typed :mod:`~posekit.sessions.changes` value, handed to the solve loop (a
mirror in a solver process applies it), and changes of the stack, of a weight or of the
solver settings are broadcast to every subscriber as a ``tasks`` message.

The loop either steps this session (:meth:`step`) or applies its changes to a mirror
in a solver process and hands the solved states back (:meth:`adopt`). A step is
:func:`~posekit.sessions.step.solve_step`; its q is published in a
:class:`~posekit.sessions.state.SessionState`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import mujoco
import numpy as np
from pydantic import BaseModel

from posekit.ik.configuration import Configuration
from posekit.ik.keyframes import keyframe_q
from posekit.ik.tasks import BaseTask
from posekit.sessions import changes
from posekit.sessions.built_spec import BuiltSpec
from posekit.sessions.caps import UNLIMITED, StackCaps
from posekit.sessions.errors import InvalidRequest
from posekit.sessions.feed import Feed
from posekit.sessions.info import SessionInfo
from posekit.sessions.kinds import (
    LimitPatch,
    LimitSpecBase,
    Target,
    TaskPatch,
    TaskSpecBase,
    as_limit_spec,
    as_task_spec,
)
from posekit.sessions.latest_state import LatestState
from posekit.sessions.loops.solve_loop import SolveLoop, StreamCounters
from posekit.sessions.q_check import check_q
from posekit.sessions.reload_report import ReloadReport
from posekit.sessions.session_spec import SessionSpec
from posekit.sessions.solver_settings import SolverPatch, SolverSettings
from posekit.sessions.state import SessionState, Status
from posekit.sessions.step import solve_step, task_errors
from posekit.sessions.subscription import Encoding, SignalBatch, Subscription
from posekit.sessions.tasks_snapshot import TasksSnapshot

M = TypeVar("M", bound=BaseModel)


def _parse(model: type[M], value: M | Mapping[str, Any]) -> M:
    return value if isinstance(value, model) else model.model_validate(value)


class Session:
    """One robot being solved live. Create sessions through :class:`SessionManager`.

    Args:
        session_id: Identifier used in URLs.
        spec: Full description (robot, q, tasks, limits, solver); tasks without a
            target get their current value as target.
        model: The compiled robot model (shared read-only).
        entry: The model's entry point (stored in exported specs).
        scheduler: The solve loop; without one, call :meth:`step` yourself.
        on_change: Called after every accepted change and when the session parks.
        caps: What the task stack may hold (tasks, limits, collision pairs;
            :class:`StackFull` errors beyond); no limit by default.
    """

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
        self._on_change = on_change
        self._feed = Feed(on_encodings=self._encodings_changed)
        self._solver = spec.solver
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

    @property
    def period(self) -> float:
        """Seconds between two solve steps."""
        return 1.0 / self._solver.rate_hz

    @property
    def revision(self) -> int:
        """Counter of accepted changes."""
        return self._revision

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

    def tasks(self) -> list[TaskSpecBase]:
        """Task specs in stack order, with their current targets."""
        with self._lock:
            return self._stack.task_specs()

    def task(self, name: str) -> TaskSpecBase:
        with self._lock:
            return self._stack.task(name).spec

    def limits(self) -> list[LimitSpecBase]:
        with self._lock:
            return self._stack.limit_specs()

    def limit(self, name: str) -> LimitSpecBase:
        with self._lock:
            return self._stack.limit(name).spec

    def engine_task(self, name: str) -> BaseTask:
        """The engine task behind task ``name`` (read it, do not change it)."""
        with self._lock:
            return self._stack.task(name).task

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

    def summary(self) -> SessionInfo:
        """Identity and status, as listed by the API."""
        with self._lock:
            return SessionInfo.of(self)

    # ================================================================= tasks
    def add_task(self, spec: TaskSpecBase | dict[str, Any]) -> TaskSpecBase:
        """Add a task (name derived when omitted); returns its spec with the target."""
        spec = as_task_spec(spec)
        with self._lock:
            added = self._stack.add_task(spec, self._synced())
            self._changed(changes.AddTask(added))
            return added

    def patch_task(self, name: str, patch: TaskPatch | Mapping[str, Any]) -> TaskSpecBase:
        """Change costs, gain, lm_damping, axis, target, enabled or role of a task."""
        patch = _parse(TaskPatch, patch)
        with self._lock:
            patched = self._stack.patch_task(name, patch)
            self._changed(changes.PatchTask(name, patch))
            return patched

    def set_target(self, task: str, target: Target | Mapping[str, Any], ref: Any = None) -> Target:
        """Move a task's target (the hot path of dragging); returns the canonical target.

        ``ref`` is echoed in the ``ref`` of the states computed after this change.
        """
        target = _parse(Target, target)
        with self._lock:
            merged = self._stack.set_target(task, target)
            if ref is not None:
                self._ref = ref
            self._changed(changes.SetTarget(task, merged, ref))
            return merged

    def remove_task(self, name: str) -> None:
        with self._lock:
            self._stack.remove_task(name)
            self._changed(changes.RemoveTask(name))

    # ================================================================ limits
    def add_limit(self, spec: LimitSpecBase | dict[str, Any]) -> LimitSpecBase:
        """Add a limit (named after its type when no name is given)."""
        spec = as_limit_spec(spec)
        with self._lock:
            added = self._stack.add_limit(spec)
            self._changed(changes.AddLimit(added))
            return added

    def patch_limit(self, name: str, patch: LimitPatch | Mapping[str, Any]) -> LimitSpecBase:
        """Enable/disable a limit or replace some of its params."""
        patch = _parse(LimitPatch, patch)
        with self._lock:
            patched = self._stack.patch_limit(name, patch)
            self._changed(changes.PatchLimit(name, patch))
            return patched

    def remove_limit(self, name: str) -> None:
        with self._lock:
            self._stack.remove_limit(name)
            self._changed(changes.RemoveLimit(name))

    # ================================================================ solver
    def set_solver(self, patch: SolverPatch | Mapping[str, Any]) -> SolverSettings:
        """Change solver settings (QP backend, dt, damping, rates, tolerance, paused)."""
        patch = _parse(SolverPatch, patch)
        with self._lock:
            settings = patch.apply_to(self._solver)
            self._stack.set_dt(settings.step_dt)
            self._solver = settings
            self._changed(changes.SetSolver(patch))
            return settings

    def replace_spec(self, spec: SessionSpec | Mapping[str, Any]) -> SessionSpec:
        """Take q, tasks, limits and solver settings from a spec of the same robot.

        Everything is built first; this session changes only when all of it is valid.
        Watchers stay subscribed and get a ``tasks`` message.
        """
        spec = _parse(SessionSpec, spec)
        if spec.robot != self.robot or spec.entry not in (None, self.entry):
            raise InvalidRequest(
                f"the spec is for robot {spec.robot!r} ({spec.entry or 'default entry'}); "
                f"this session runs {self.robot!r} ({self.entry})"
            )
        built = BuiltSpec.build(spec, self.model, self.entry, self.caps)
        with self._lock:
            self._q_set_by_next_change()
            self._configuration, self._stack = built.configuration, built.stack
            self._solver = spec.solver
            self._changed(changes.ReplaceSpec(built.canonical))
        return built.canonical

    def reload_model(
        self,
        model: mujoco.MjModel,
        fit: Callable[[SessionSpec, mujoco.MjModel], tuple[SessionSpec, ReloadReport]],
    ) -> ReloadReport:
        """Run a recompiled model of this session's robot (its files changed).

        ``fit(spec, current model)`` gives the spec made to fit ``model`` and the report
        of what it changed (:func:`~posekit.sessions.model_fit.fit_spec`). Validate,
        then swap: the spec is built on ``model`` first; the session changes only when
        all of it is valid. Watchers get a ``tasks`` message, the report and a state on
        the new model.
        """
        with self._lock:
            fitted, report = fit(self.spec(), self.model)
            built = BuiltSpec.build(fitted, model, self.entry, self.caps)
            self._q_set_by_next_change()
            self.model = model
            self._configuration, self._stack = built.configuration, built.stack
            self._solver = fitted.solver
            state = self._make_state("paused" if self._solver.paused else "running", None, 0.0)
            self._latest.publish(state)
            self.last_reload = report.model_copy(update={"revision": self._revision + 1})
            self._feed.broadcast(self.last_reload)  # first: watchers read it before ``tasks``
            self._changed(changes.ReloadModel(built.canonical))
        batch = SignalBatch()
        self._publish(state, batch)
        batch.flush()
        return self.last_reload

    def report_reload(self, report: ReloadReport) -> None:
        """Tell watchers about a reload of the robot that this session could not take
        (the new files do not compile: it keeps its model)."""
        with self._lock:
            self.last_reload = report.model_copy(update={"revision": self._revision})
        self._feed.broadcast(self.last_reload)

    def set_q(self, q: object = None, keyframe: str | None = None) -> list[float]:
        """Set the configuration from ``q`` (size nq) or a keyframe name."""
        if (q is None) == (keyframe is None):
            raise InvalidRequest("give exactly one of q or keyframe")
        vector = check_q(self.model, q if keyframe is None else keyframe_q(self.model, keyframe))
        with self._lock:
            self._q_set_by_next_change()
            self._configuration.update(vector)
            self._changed(changes.SetQ(vector.tolist()))
            return vector.tolist()

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
        """Stop solving and end every subscription."""
        with self._lock:
            self.closed = True
            if self._loop is not None:
                self._loop.remove(self)
        self._feed.end(reason)

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
            settings = self._solver
            if settings.paused:
                state = self._make_state("paused", None, 0.0)
            else:
                plan = self._stack.plan()
                outcome = solve_step(plan, self._configuration, settings)
                state = self._make_state(
                    outcome.status,
                    outcome.error,
                    outcome.solve_us,
                    outcome.errors,
                    throttled,
                    rate_hz,
                )
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

    def replay(self, change: changes.Change, revision: int) -> None:
        """Apply a change accepted by the session this one mirrors, and its revision."""
        with self._lock:
            changes.apply(change, self)
            self._revision = revision

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
    ) -> SessionState:
        """The next state; ``errors`` (a step's) are computed here when not given."""
        if errors is None:
            errors = task_errors(self._stack.plan(), self._configuration)
        self._seq += 1
        # Positional, and rounded by hand (both values are ≥ 0): keywords and round()
        # cost about 2 µs a state, a tenth of a compiled step.
        return SessionState(
            self._seq,
            time.time(),
            self._configuration.data.qpos.tolist(),
            errors,
            status == "converged",
            status,
            error,
            int(solve_us * 10.0 + 0.5) / 10.0,
            self._ref,
            self._revision,
            throttled and status == "running",
            int((rate_hz or self._solver.rate_hz) * 100.0 + 0.5) / 100.0,
        )

    def _changed(self, change: changes.Change) -> None:
        """Record an accepted change (lock held): tell the loop and the subscribers."""
        self._revision += 1
        self.touch()
        if changes.is_structural(change):
            self._feed.offer_tasks(self.tasks_snapshot())
        if self._loop is not None:
            self._loop.changed(self, change)
        if self._on_change is not None:
            self._on_change(self)
