"""A live IK session: a configuration, a task stack, solver settings, a revision and a feed.

Every public method is thread-safe and validates its input completely before it touches
the session (the :class:`~posekit.sessions.live.stack.TaskStack` validates, then swaps),
so a rejected change leaves the session exactly as it was. Each accepted change raises
the revision, wakes the solver (:class:`~posekit.sessions.solving.solver.Solver`), and —
unless it only moves a target or q — is broadcast to every watcher as a ``tasks``
message. Targets are latest-wins: a newer target of a task replaces the one the solver
has not stepped yet, so a session never queues its watchers' moves.

A step (:meth:`Session.step`) is :func:`~posekit.sessions.live.step.solve_step`; its q
is published as a :class:`~posekit.sessions.live.state.SessionState` to every watcher.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

import mujoco
import numpy as np
from pydantic import BaseModel

from posekit.ik.keyframes import keyframe_q
from posekit.ik.tasks import BaseTask
from posekit.memory import note_freed
from posekit.sessions.errors import InvalidRequest, TakeConflict, TakeNotFound
from posekit.sessions.kinds import (
    LimitPatch,
    LimitSpecBase,
    Target,
    TaskPatch,
    TaskSpecBase,
    as_limit_spec,
    as_task_spec,
)
from posekit.sessions.live.built_spec import BuiltSpec
from posekit.sessions.live.error_message import ErrorMessage
from posekit.sessions.live.info import SessionInfo
from posekit.sessions.live.q_check import check_q
from posekit.sessions.live.session_stream import SessionStream
from posekit.sessions.live.state import SessionState, Status
from posekit.sessions.live.step import solve_step, task_errors
from posekit.sessions.live.subscription import SignalBatch, Subscription
from posekit.sessions.live.tasks_snapshot import TasksSnapshot
from posekit.sessions.reload.reload_report import ReloadReport
from posekit.sessions.specs.caps import UNLIMITED, StackCaps
from posekit.sessions.specs.session_spec import SessionSpec
from posekit.sessions.specs.solver_settings import SolverPatch, SolverSettings
from posekit.sessions.takes.recorder import TakeRecorder
from posekit.sessions.takes.take import Take, TakeInfo

M = TypeVar("M", bound=BaseModel)


class Wakes(Protocol):
    """What a session tells the solver that steps it."""

    def changed(self, session: Any) -> None: ...

    def remove(self, session: Any) -> None: ...


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
        solver: What steps it; without one, call :meth:`step` yourself.
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
        solver: Wakes | None = None,
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
        self.paused_why: str | None = None
        """Why the server paused the session (:meth:`pause`); None once resumed."""
        self.recording: TakeRecorder | None = None
        """The take being recorded (:meth:`start_take`), if one is."""
        self._lock = threading.RLock()
        self._scheduler = solver
        self._on_change = on_change
        self._stream = SessionStream()
        self.period = 0.0
        """Seconds between two solve steps (set with the solver settings)."""
        self._take_solver(spec.solver)
        built = BuiltSpec.build(spec, model, entry, caps)
        self._configuration, self._stack = built.configuration, built.stack
        self._revision = 0
        self._make_state("paused" if self._solver.paused else "running")

    # ================================================================ reading
    @property
    def state(self) -> SessionState:
        """The latest state (immutable)."""
        state = self._stream.state
        assert state is not None  # made in __init__
        return state

    @property
    def solver(self) -> SolverSettings:
        return self._solver

    @property
    def revision(self) -> int:
        """Counter of accepted changes."""
        return self._revision

    @property
    def watchers(self) -> int:
        """Number of live subscriptions."""
        return len(self._stream.feed)

    def backlog(self) -> int:
        """The most updates any subscriber has not taken yet (bounded per subscriber)."""
        return self._stream.feed.backlog()

    @property
    def q(self) -> np.ndarray:
        """A copy of the current configuration."""
        with self._lock:
            return self._configuration.q

    def spec(self) -> SessionSpec:
        """The portable spec; creating a session from it restores this exact state."""
        with self._lock:
            return SessionSpec.model_construct(
                version=1,
                robot=self.robot,
                entry=self.entry,
                q=self._configuration.data.qpos.tolist(),
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
            return self._stack.engine_task(name)

    def summary(self) -> SessionInfo:
        """Identity and status, as listed by the API."""
        with self._lock:
            return SessionInfo.of(self)

    def touch(self) -> None:
        """Record a use of the session (idle sessions are unloaded by the manager)."""
        self.last_used = time.monotonic()

    # ========================================================= subscriptions
    def subscribe(
        self,
        loop: asyncio.AbstractEventLoop | None = None,
        initial_state: bool = True,
    ) -> Subscription:
        """A latest-wins feed of states and ``tasks`` messages for an asyncio consumer.

        Call from the consumer's event loop (or pass it). The feed starts with the
        latest state unless ``initial_state`` is false.
        """
        return self._stream.subscribe(loop or asyncio.get_running_loop(), initial_state)

    def close(self, reason: str = "session deleted") -> None:
        """Stop solving and end every subscription; the heap is trimmed soon after
        (:func:`~posekit.memory.note_freed`)."""
        with self._lock:
            self.closed = True
        if self._scheduler is not None:
            self._scheduler.remove(self)
        self._stream.feed.end(reason)
        note_freed()

    # ================================================================= tasks
    def add_task(self, spec: TaskSpecBase | dict[str, Any]) -> TaskSpecBase:
        """Add a task (name derived when omitted); returns its spec with the target."""
        spec = as_task_spec(spec)
        with self._lock:
            added = self._stack.add_task(spec, self._configuration)
            self._changed(structural=True, take=("add_task", {"spec": added}))
            return added

    def patch_task(self, name: str, patch: TaskPatch | Mapping[str, Any]) -> TaskSpecBase:
        """Change costs, gain, lm_damping, axis, target, enabled or role of a task."""
        patch = _parse(TaskPatch, patch)
        with self._lock:
            patched = self._stack.patch_task(name, patch)
            self._changed(structural=True, take=("task", {"task": name, "patch": patch}))
            return patched

    def set_target(self, task: str, target: Target | Mapping[str, Any], ref: Any = None) -> Target:
        """Move a task's target; returns the canonical target. ``ref`` is echoed in the
        ``ref`` of the states computed after this change."""
        target = _parse(Target, target)
        with self._lock:
            merged = self._stack.set_target(task, target)
            self._moved(ref, task, merged)
            return merged

    def move_target(self, task: str, given: Mapping[str, Any], ref: Any = None) -> None:
        """:meth:`set_target` for a target given as valid values of :class:`Target`
        fields by name (a stream message, checked against its schema): the same checks
        and errors."""
        with self._lock:
            self._moved(ref, task, self._stack.move_target(task, given))

    def remove_task(self, name: str) -> None:
        with self._lock:
            self._stack.remove_task(name)
            self._changed(structural=True, take=("remove_task", {"task": name}))

    # ================================================================ limits
    def add_limit(self, spec: LimitSpecBase | dict[str, Any]) -> LimitSpecBase:
        """Add a limit (named after its type when no name is given)."""
        spec = as_limit_spec(spec)
        with self._lock:
            added = self._stack.add_limit(spec)
            self._changed(structural=True, take=("add_limit", {"spec": added}))
            return added

    def patch_limit(self, name: str, patch: LimitPatch | Mapping[str, Any]) -> LimitSpecBase:
        """Enable/disable a limit or replace some of its params."""
        patch = _parse(LimitPatch, patch)
        with self._lock:
            patched = self._stack.patch_limit(name, patch)
            self._changed(structural=True, take=("limit", {"limit": name, "patch": patch}))
            return patched

    def remove_limit(self, name: str) -> None:
        with self._lock:
            self._stack.remove_limit(name)
            self._changed(structural=True, take=("remove_limit", {"limit": name}))

    # ======================================================== solver, q, spec
    def set_solver(self, patch: SolverPatch | Mapping[str, Any]) -> SolverSettings:
        """Change solver settings (QP backend, dt, damping, rates, tolerance, paused)."""
        patch = _parse(SolverPatch, patch)
        with self._lock:
            settings = patch.apply_to(self._solver)
            self.paused_why = self.paused_why if settings.paused else None
            self._stack.set_dt(settings.step_dt)
            self._take_solver(settings)
            self._changed(structural=True, take=("solver", {"patch": patch}))
            return settings

    def set_q(self, q: object = None, keyframe: str | None = None) -> list[float]:
        """Set the configuration from ``q`` (size nq) or a keyframe name."""
        if (q is None) == (keyframe is None):
            raise InvalidRequest("give exactly one of q or keyframe")
        vector = check_q(self.model, q if keyframe is None else keyframe_q(self.model, keyframe))
        with self._lock:
            self._configuration.update(vector)
            self._changed(structural=False, take=("q", {"q": vector.tolist()}))
            return vector.tolist()

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
            self._configuration, self._stack = built.configuration, built.stack
            self._take_solver(spec.solver)
            self._changed(structural=True)
        return built.canonical

    def reload_model(
        self,
        model: mujoco.MjModel,
        fit: Callable[[SessionSpec, mujoco.MjModel], tuple[SessionSpec, ReloadReport]],
    ) -> ReloadReport:
        """Run a recompiled model of this session's robot (its files changed).

        ``fit(spec, current model)`` gives the spec made to fit ``model`` and the report
        of what it changed (:func:`~posekit.sessions.reload.model_fit.fit_spec`).
        Validate, then swap: the spec is built on ``model`` first; the session changes
        only when all of it is valid. Watchers get the report, a ``tasks`` message and
        a state on the new model.
        """
        with self._lock:
            fitted, report = fit(self.spec(), self.model)
            built = BuiltSpec.build(fitted, model, self.entry, self.caps)
            self.model = model
            self._configuration, self._stack = built.configuration, built.stack
            self._take_solver(fitted.solver)
            state = self._make_state("paused" if self._solver.paused else "running")
            self.last_reload = report.model_copy(update={"revision": self._revision + 1})
            self._stream.broadcast(self.last_reload)  # first: read before ``tasks``
            self._changed(structural=True)
        self._publish(state)
        return self.last_reload

    def report_reload(self, report: ReloadReport) -> None:
        """Tell watchers about a reload of the robot that this session could not take
        (the new files do not compile: it keeps its model)."""
        with self._lock:
            self.last_reload = report.model_copy(update={"revision": self._revision})
        self._stream.broadcast(self.last_reload)

    # ================================================================= takes
    def start_take(self, take_id: str, name: str = "") -> TakeInfo:
        """Start recording a take (:mod:`posekit.sessions.takes`) from the session as
        it is now; :class:`TakeConflict` while another is recorded."""
        with self._lock:
            if self.recording is not None:
                raise TakeConflict(
                    f"take {self.recording.take_id!r} is being recorded; stop it first"
                )
            self.recording = TakeRecorder(take_id, name, self.spec())
            return self.recording.take().info(recording=True)

    def stop_take(self) -> Take:
        """Stop recording; the take (:class:`TakeNotFound` when none was recorded)."""
        with self._lock:
            recorder, self.recording = self.recording, None
        if recorder is None:
            raise TakeNotFound("no take is being recorded in this session")
        return recorder.take()

    def tell(self, message: object) -> None:
        """Send every watcher a message of the stream's protocol (an ``error`` nobody
        asked about: changes not stored, the session paused)."""
        self._stream.broadcast(message)

    def pause(self, reason: str) -> None:
        """Pause the session, saying why: in its states' ``error`` until it is resumed,
        and to its watchers (``error`` ``too_slow``)."""
        with self._lock:
            self._take_solver(SolverPatch(paused=True).apply_to(self._solver))
            self.paused_why = reason
            self._changed(structural=True)
        self.tell(ErrorMessage(code="too_slow", message=reason))

    # ================================================================= solve
    def step(
        self, batch: SignalBatch | None = None, throttled: bool = False, rate_hz: float = 0.0
    ) -> SessionState:
        """Solve one step now and publish its state (into ``batch``, flushed by the
        caller; else at once). ``throttled``: the solver steps this session less often
        than its rate, at ``rate_hz`` (both reported in the state)."""
        with self._lock:
            if self.closed:
                return self.state
            settings = self._solver
            if settings.paused:
                state = self._make_state("paused")
            else:
                plan = self._stack.plan()
                before = self._configuration.data.qpos.copy() if plan.limits else None
                status, error, solve_us, errors, q = solve_step(plan, self._configuration, settings)
                if self.recording is not None:
                    self.recording.stepped()
                binding = (
                    plan.watch(self.model).binding(
                        before, self._configuration.data.qpos, settings.step_dt
                    )
                    if before is not None
                    else None
                )
                state = self._stream.next_state(
                    q, errors, status, self._revision, rate_hz or settings.rate_hz,
                    error=error, solve_us=solve_us, throttled=throttled, limits=binding,
                )  # fmt: skip
        self._publish(state, batch)
        return state

    # =============================================================== helpers
    def _take_solver(self, settings: SolverSettings) -> None:
        """Use ``settings`` from now on."""
        self._solver = settings
        self.period = 1.0 / settings.rate_hz

    def _publish(self, state: SessionState, batch: SignalBatch | None = None) -> None:
        """Offer a new state to every subscriber; a parked session is reported changed
        (its q is then saved)."""
        self._stream.offer(state, batch)
        if state.status != "running" and self._on_change is not None:
            self._on_change(self)

    def _make_state(self, status: Status) -> SessionState:
        """The next state, of the configuration as it is (not a step's; lock held)."""
        return self._stream.next_state(
            self._configuration.data.qpos.tolist(),
            task_errors(self._stack.plan(), self._configuration),
            status,
            self._revision,
            self._solver.rate_hz,
            error=self.paused_why if status == "paused" else None,
        )

    def _moved(self, ref: Any, task: str, target: Target) -> None:
        """A target moved (lock held): latest wins, the watchers get no ``tasks``."""
        if ref is not None:
            self._stream.ref = ref
        self._changed(structural=False, take=("target", {"task": task, "target": target}))

    def _changed(self, structural: bool, take: tuple[str, dict[str, Any]] | None = None) -> None:
        """Record an accepted change (lock held): wake the solver, tell the watchers of a
        change of the stack or the settings, and the store; ``take``: the input as the
        take being recorded keeps it (its kind and fields)."""
        if take is not None and self.recording is not None:
            self.recording.record(take[0], **take[1])
        self._revision += 1
        self.last_used = time.monotonic()
        if structural:
            self._stream.offer_tasks(self.tasks_snapshot())
        if self._scheduler is not None:
            self._scheduler.changed(self)
        if self._on_change is not None:
            self._on_change(self)
