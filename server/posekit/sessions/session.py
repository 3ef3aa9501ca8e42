"""A live IK session: a configuration, a task stack, limits, solver settings, a solve loop.

Every public method is thread-safe and validates its input completely before it
touches the session: new engine objects are built first and swapped in only when
everything succeeded, so a rejected change leaves the session exactly as it was.
Accepted changes go to the solve loop (see :mod:`posekit.sessions.solve_loop`) as
replayable calls, and changes of the task stack, of a weight or of the solver settings
are broadcast to every subscriber as a ``tasks`` message.

The loop either steps this object (:class:`~posekit.sessions.scheduler.Scheduler`) or
replays its changes on a mirror in a solver process and hands the solved states back
to :meth:`Session._adopt` (:mod:`posekit.sessions.solver_processes`).

Solve step (on the scheduler thread): ``v = solve_ik(...)`` with the enabled objective
tasks, the enabled constraint tasks as hard equalities and the enabled limits; when
``max |v_i| dt < tolerance`` the session parks without moving (a fixed point),
otherwise ``q ← q ⊕ v dt``. A failed solve keeps q, records the error and parks until
the next change. Non-finite values never reach q.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import mujoco
import numpy as np
from pydantic import BaseModel

from posekit.ik.configuration import Configuration, as_vector
from posekit.ik.exceptions import InvalidKeyframe, NoSolutionFound, PosekitError
from posekit.ik.limits import Limit
from posekit.ik.solve import solve_ik
from posekit.ik.tasks import BaseTask, KineticEnergyRegularizationTask, Task
from posekit.robots.presets import task_name
from posekit.sessions import targets
from posekit.sessions.build import build_limit, build_task
from posekit.sessions.errors import (
    InvalidRequest,
    LimitNotFound,
    NameConflict,
    TaskLimitReached,
    TaskNotFound,
)
from posekit.sessions.limit_specs import LIMIT_SPEC_ADAPTER, LimitPatch, LimitSpec
from posekit.sessions.session_spec import SessionSpec
from posekit.sessions.solver_settings import SolverPatch, SolverSettings
from posekit.sessions.state import SessionState, Status
from posekit.sessions.subscription import SignalBatch, Subscription
from posekit.sessions.targets import Target
from posekit.sessions.task_specs import TASK_SPEC_ADAPTER, TaskPatch, TaskSpec

if TYPE_CHECKING:
    from posekit.sessions.solve_loop import Call, SolveLoop

M = TypeVar("M", bound=BaseModel)


def _parse(model: type[M], value: M | Mapping[str, Any]) -> M:
    return value if isinstance(value, model) else model.model_validate(value)


def check_q(model: mujoco.MjModel, q: object) -> np.ndarray:
    """A configuration of size nq with finite values and unit quaternions.

    Quaternions of free and ball joints are normalised; a zero quaternion is an error.
    """
    vector = as_vector(q, model.nq, "q").copy()
    for j in range(model.njnt):
        kind = int(model.jnt_type[j])
        if kind == mujoco.mjtJoint.mjJNT_FREE:
            adr = int(model.jnt_qposadr[j]) + 3
        elif kind == mujoco.mjtJoint.mjJNT_BALL:
            adr = int(model.jnt_qposadr[j])
        else:
            continue
        norm = float(np.linalg.norm(vector[adr : adr + 4]))
        if norm < 1e-9:
            name = model.joint(j).name or f"#{j}"
            raise InvalidRequest(
                f"q has a zero quaternion for joint {name!r} at q[{adr}:{adr + 4}]"
            )
        vector[adr : adr + 4] /= norm
    return vector


@dataclass
class _TaskEntry:
    spec: Any  # a TaskSpec variant, with its name and canonical target set
    task: BaseTask


@dataclass
class _LimitEntry:
    spec: Any  # a LimitSpec variant, with its name set
    limit: Limit


@dataclass
class _Plan:
    """The enabled engine objects, rebuilt only when the stack changes."""

    objectives: list[BaseTask]
    constraints: list[Task]
    limits: list[Limit]
    error_tasks: list[tuple[str, Task]]
    silent: list[str]  # tasks reported with a None error


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
        max_tasks: The task stack holds at most this many tasks
            (:class:`TaskLimitReached` beyond); None for no limit.
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
        max_tasks: int | None = None,
    ) -> None:
        if max_tasks is not None and len(spec.tasks) > max_tasks:
            raise TaskLimitReached(len(spec.tasks), max_tasks)
        self.id = session_id
        self.robot = spec.robot
        self.entry = entry
        self.model = model
        self.created = time.time()
        self.last_used = time.monotonic()
        self.closed = False
        self.max_tasks = max_tasks
        self._lock = threading.RLock()
        self._scheduler = scheduler
        self._on_change = on_change
        self._subscribers: list[Subscription] = []
        self._subs_lock = threading.Lock()
        # Scheduler bookkeeping (guarded by the scheduler's condition).
        self._sched_due: float | None = None
        self._sched_token = 0
        self._sched_urgent = False
        self._last_step = -math.inf

        self._solver = spec.solver
        self._configuration = Configuration(model, q=check_q(model, spec.q))
        # From a solver process (see _adopt): the reader thread takes only _state_lock, which
        # is never held across I/O, so it never waits for a change being sent.
        self._state_lock = threading.Lock()
        self._solved_q: list[float] | None = None  # solved, not applied yet
        self._q_revision = 0  # the revision of the last change that set q
        self._tasks: dict[str, _TaskEntry] = {}
        self._limits: dict[str, _LimitEntry] = {}
        for task_spec in spec.tasks:
            name = self._spec_name(task_spec.name, self._default_task_name(task_spec), self._tasks)
            self._tasks[name] = self._build_task_entry(task_spec, name)
        for limit_spec in spec.limits:
            name = self._spec_name(limit_spec.name, limit_spec.type, self._limits)
            self._limits[name] = self._build_limit_entry(limit_spec, name)
        self._plan: _Plan | None = None
        self._seq = 0
        self._ref: Any = None
        self._revision = 0
        status: Status = "paused" if self._solver.paused else "running"
        self._state = self._make_state(status, False, None, 0.0)

    # ================================================================ reading
    @property
    def nq(self) -> int:
        return self.model.nq

    @property
    def nv(self) -> int:
        return self.model.nv

    @property
    def state(self) -> SessionState:
        """The latest state (immutable)."""
        return self._state

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
        return len(self._subscribers)

    @property
    def q(self) -> np.ndarray:
        """A copy of the current configuration."""
        with self._lock:
            return self._synced().q

    def tasks(self) -> list[TaskSpec]:
        """Task specs in stack order, with their current targets."""
        with self._lock:
            return [entry.spec for entry in self._tasks.values()]

    def task(self, name: str) -> TaskSpec:
        with self._lock:
            return self._task_entry(name).spec

    def limits(self) -> list[LimitSpec]:
        with self._lock:
            return [entry.spec for entry in self._limits.values()]

    def limit(self, name: str) -> LimitSpec:
        with self._lock:
            return self._limit_entry(name).spec

    def spec(self) -> SessionSpec:
        """The portable spec; creating a session from it restores this exact state."""
        with self._lock:
            return SessionSpec.model_construct(
                version=1,
                robot=self.robot,
                entry=self.entry,
                q=self._synced().data.qpos.tolist(),
                tasks=[entry.spec for entry in self._tasks.values()],
                limits=[entry.spec for entry in self._limits.values()],
                solver=self._solver,
            )

    def tasks_message(self) -> dict[str, Any]:
        """The websocket ``tasks`` message: the task stack, limits and solver settings."""
        with self._lock:
            return {
                "type": "tasks",
                "revision": self._revision,
                "tasks": [e.spec.model_dump(mode="json") for e in self._tasks.values()],
                "limits": [e.spec.model_dump(mode="json") for e in self._limits.values()],
                "solver": self._solver.model_dump(mode="json"),
            }

    def summary(self) -> dict[str, Any]:
        """Identity and status, as listed by the API."""
        with self._lock:
            state = self._state
            return {
                "id": self.id,
                "robot": self.robot,
                "entry": self.entry,
                "nq": self.nq,
                "nv": self.nv,
                "joint_names": [self.model.joint(j).name for j in range(self.model.njnt)],
                "created": self.created,
                "status": state.status,
                "error": state.error,
                "seq": state.seq,
                "revision": self._revision,
                "watchers": self.watchers,
                "tasks": list(self._tasks),
                "limits": list(self._limits),
                "solver": self._solver.model_dump(mode="json"),
            }

    # ================================================================= tasks
    def add_task(self, spec: TaskSpec | Mapping[str, Any]) -> TaskSpec:
        """Add a task (name derived when omitted); returns its spec with the target."""
        spec = spec if isinstance(spec, BaseModel) else TASK_SPEC_ADAPTER.validate_python(spec)
        with self._lock:
            name = spec.name or self._free_name(self._default_task_name(spec), self._tasks)
            if name in self._tasks:
                raise NameConflict(f"a task named {name!r} already exists in this session")
            if self.max_tasks is not None and len(self._tasks) >= self.max_tasks:
                raise TaskLimitReached(len(self._tasks) + 1, self.max_tasks)
            entry = self._build_task_entry(spec, name)
            self._tasks[name] = entry
            self._changed(structural=True, call=("add_task", (entry.spec,)))
            return entry.spec

    def patch_task(self, name: str, patch: TaskPatch | Mapping[str, Any]) -> TaskSpec:
        """Change costs, gain, lm_damping, axis, target, enabled or role of a task."""
        patch = _parse(TaskPatch, patch)
        with self._lock:
            entry = self._task_entry(name)
            spec = entry.spec
            updates = patch.param_updates()
            params_cls = type(spec.params)
            wrong = sorted(set(updates) - set(params_cls.model_fields))
            if wrong:
                patchable = sorted(
                    set(params_cls.model_fields) & set(TaskPatch.model_fields)
                    | {"target", "enabled", "role"}
                )
                raise InvalidRequest(
                    f"task {name!r} (type {spec.type!r}) has no {', '.join(wrong)}; "
                    f"it accepts {', '.join(patchable)}"
                )
            fields = spec.model_dump(exclude={"target"})
            fields["params"].update(updates)
            if patch.enabled is not None:
                fields["enabled"] = patch.enabled
            if patch.role is not None:
                fields["role"] = patch.role
            new_spec = type(spec).model_validate(fields)
            target = spec.target
            if patch.target is not None:
                target = targets.merge(spec.type, name, target, patch.target, self.model)
            if updates:
                task = build_task(new_spec, self.model, self._solver.step_dt)
                if target is not None:
                    targets.apply(spec.type, task, target)
            else:
                task = entry.task
                if patch.target is not None:
                    targets.apply(spec.type, task, target)  # validates before assigning
            new_spec = new_spec.model_copy(update={"target": target})
            self._tasks[name] = _TaskEntry(new_spec, task)
            self._changed(structural=True, call=("patch_task", (name, patch)))
            return new_spec

    def set_target(self, task: str, target: Target | Mapping[str, Any], ref: Any = None) -> Target:
        """Move a task's target (the hot path of dragging); returns the canonical target.

        ``ref`` is echoed in the ``ref`` of the states computed after this change.
        """
        target = _parse(Target, target)
        with self._lock:
            entry = self._task_entry(task)
            merged = targets.merge(entry.spec.type, task, entry.spec.target, target, self.model)
            targets.apply(entry.spec.type, entry.task, merged)
            entry.spec = entry.spec.model_copy(update={"target": merged})
            if ref is not None:
                self._ref = ref
            self._changed(structural=False, call=("set_target", (task, merged, ref)))
            return merged

    def remove_task(self, name: str) -> None:
        with self._lock:
            self._task_entry(name)
            del self._tasks[name]
            self._changed(structural=True, call=("remove_task", (name,)))

    # ================================================================ limits
    def add_limit(self, spec: LimitSpec | Mapping[str, Any]) -> LimitSpec:
        """Add a limit (named after its type when no name is given)."""
        spec = spec if isinstance(spec, BaseModel) else LIMIT_SPEC_ADAPTER.validate_python(spec)
        with self._lock:
            name = spec.name or self._free_name(spec.type, self._limits)
            if name in self._limits:
                raise NameConflict(f"a limit named {name!r} already exists in this session")
            entry = self._build_limit_entry(spec, name)
            self._limits[name] = entry
            self._changed(structural=True, call=("add_limit", (entry.spec,)))
            return entry.spec

    def patch_limit(self, name: str, patch: LimitPatch | Mapping[str, Any]) -> LimitSpec:
        """Enable/disable a limit or replace some of its params."""
        patch = _parse(LimitPatch, patch)
        with self._lock:
            entry = self._limit_entry(name)
            updates = patch.param_updates()
            params_cls = type(entry.spec.params)
            wrong = sorted(set(updates) - set(params_cls.model_fields))
            if wrong:
                raise InvalidRequest(
                    f"limit {name!r} (type {entry.spec.type!r}) has no {', '.join(wrong)}; "
                    f"it accepts enabled, {', '.join(params_cls.model_fields)}"
                )
            fields = entry.spec.model_dump()
            fields["params"].update(updates)
            if patch.enabled is not None:
                fields["enabled"] = patch.enabled
            new_spec = type(entry.spec).model_validate(fields)
            limit = build_limit(new_spec, self.model) if updates else entry.limit
            self._limits[name] = _LimitEntry(new_spec, limit)
            self._changed(structural=True, call=("patch_limit", (name, patch)))
            return new_spec

    def remove_limit(self, name: str) -> None:
        with self._lock:
            self._limit_entry(name)
            del self._limits[name]
            self._changed(structural=True, call=("remove_limit", (name,)))

    # ================================================================ solver
    def set_solver(self, patch: SolverPatch | Mapping[str, Any]) -> SolverSettings:
        """Change solver settings (QP backend, dt, damping, rates, tolerance, paused)."""
        patch = _parse(SolverPatch, patch)
        with self._lock:
            settings = patch.apply_to(self._solver)
            for entry in self._tasks.values():
                if isinstance(entry.task, KineticEnergyRegularizationTask):
                    entry.task.set_dt(settings.step_dt)
            self._solver = settings
            self._changed(structural=True, call=("set_solver", (patch,)))
            return settings

    def replace_spec(self, spec: SessionSpec | Mapping[str, Any]) -> SessionSpec:
        """Take q, tasks, limits and solver settings from a spec of the same robot.

        Everything is built on a scratch session first; this session changes only
        when all of it is valid. Watchers stay subscribed and get a ``tasks`` message.
        """
        spec = _parse(SessionSpec, spec)
        if spec.robot != self.robot or spec.entry not in (None, self.entry):
            raise InvalidRequest(
                f"the spec is for robot {spec.robot!r} ({spec.entry or 'default entry'}); "
                f"this session runs {self.robot!r} ({self.entry})"
            )
        scratch = Session(self.id, spec, self.model, self.entry, max_tasks=self.max_tasks)
        canonical = scratch.spec()
        with self._lock:
            self._q_set_by_next_change()
            self._configuration = scratch._configuration
            self._tasks = scratch._tasks
            self._limits = scratch._limits
            self._solver = scratch._solver
            self._changed(structural=True, call=("replace_spec", (canonical,)))
        return canonical

    def set_q(self, q: object = None, keyframe: str | None = None) -> list[float]:
        """Set the configuration from ``q`` (size nq) or a keyframe name."""
        if (q is None) == (keyframe is None):
            raise InvalidRequest("give exactly one of q or keyframe")
        if keyframe is not None:
            key_id = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_KEY, keyframe)
            if key_id < 0:
                raise InvalidKeyframe(keyframe, self.model)
            q = self.model.key_qpos[key_id]
        vector = check_q(self.model, q)
        with self._lock:
            self._q_set_by_next_change()
            self._configuration.update(vector)
            self._changed(structural=False, call=("set_q", (vector.tolist(),)))
            return vector.tolist()

    def touch(self) -> None:
        """Record a use of the session (idle sessions are unloaded by the manager)."""
        self.last_used = time.monotonic()

    # ========================================================= subscriptions
    def subscribe(
        self, loop: asyncio.AbstractEventLoop | None = None, initial_state: bool = True
    ) -> Subscription:
        """A latest-wins feed of states and ``tasks`` messages for an asyncio consumer.

        Call from the consumer's event loop (or pass it). The feed starts with the
        latest state unless ``initial_state`` is false.
        """
        subscription = Subscription(loop or asyncio.get_running_loop(), self._unsubscribe)
        with self._subs_lock:
            if self.closed:
                subscription.end("session deleted")
            else:
                self._subscribers = [*self._subscribers, subscription]
        if initial_state:
            subscription.offer_state(self._state)
        return subscription

    def _unsubscribe(self, subscription: Subscription) -> None:
        with self._subs_lock:
            self._subscribers = [s for s in self._subscribers if s is not subscription]

    def close(self, reason: str = "session deleted") -> None:
        """Stop solving and end every subscription."""
        with self._lock:
            self.closed = True
            if self._scheduler is not None:
                self._scheduler.remove(self)
        with self._subs_lock:
            subscribers, self._subscribers = self._subscribers, []
        for subscription in subscribers:
            subscription.end(reason)

    # ================================================================= solve
    def step(self) -> SessionState:
        """Run one solve step now (for use without a scheduler); returns the new state."""
        batch = SignalBatch()
        self._step(batch)
        batch.flush()
        return self._state

    def _step(self, batch: SignalBatch) -> bool:
        """One solve step; returns whether to keep stepping (False: parked)."""
        with self._lock:
            if self.closed:
                return False
            settings = self._solver
            if settings.paused:
                state = self._make_state("paused", False, None, 0.0)
            else:
                state = self._solve(settings)
            self._state = state
            self._last_step = time.monotonic()
        self._publish(state, batch)
        return state.status == "running"

    def _adopt(self, state: SessionState, batch: SignalBatch) -> None:
        """Publish a state solved by a mirror of this session in a solver process.

        Its q becomes this session's q (applied lazily, see :meth:`_synced`). States
        older than the current one, and states solved before the latest change that set
        q (``set_q``, ``replace_spec``), are dropped: they would undo that change.
        """
        with self._state_lock:
            if self.closed or state.seq <= self._state.seq or state.revision < self._q_revision:
                return
            self._solved_q = state.q
            self._state = state
        self._publish(state, batch)

    def _fail(self, message: str) -> None:
        """Publish a ``failed`` state computed here: the session can no longer be solved."""
        with self._lock:
            self._synced()
            self._seq = max(self._seq, self._state.seq)
            state = self._make_state("failed", False, message, 0.0)
            with self._state_lock:
                self._state = state
        batch = SignalBatch()
        self._publish(state, batch)
        batch.flush()

    def _publish(self, state: SessionState, batch: SignalBatch) -> None:
        """Offer a new state to every subscriber; a parked session is reported changed
        (its q is then saved)."""
        for subscription in self._subscribers:
            subscription.offer_state(state, batch)
        if state.status != "running" and self._on_change is not None:
            self._on_change(self)

    def _mirror_counters(self) -> dict[str, Any]:
        """What a mirror needs besides the spec to continue this session's stream."""
        return {"revision": self._revision, "seq": self._state.seq, "ref": self._ref}

    def _continue_from(self, counters: Mapping[str, Any]) -> None:
        """Take over a session's counters (this session is its mirror)."""
        self._revision = counters["revision"]
        self._seq = counters["seq"]
        self._ref = counters["ref"]

    def _synced(self) -> Configuration:
        """The configuration, with the latest solved q applied (lock held)."""
        with self._state_lock:
            q, self._solved_q = self._solved_q, None
        if q is not None:
            self._configuration.update(np.asarray(q))
        return self._configuration

    def _q_set_by_next_change(self) -> None:
        """The next change sets q: states solved before it no longer carry q (lock held)."""
        with self._state_lock:
            self._q_revision = self._revision + 1
            self._solved_q = None

    def _solve(self, settings: SolverSettings) -> SessionState:
        plan = self._current_plan()
        configuration = self._configuration
        dt = settings.step_dt
        start = time.perf_counter()
        status: Status = "running"
        error = None
        try:
            velocity = solve_ik(
                configuration,
                plan.objectives,
                dt,
                settings.solver,
                damping=settings.damping,
                limits=plan.limits,
                constraints=plan.constraints or None,
            )
            # Small vectors: Python over a list beats NumPy's per-call overhead. A sum is
            # not finite when any entry is NaN or infinite (max() could skip a NaN).
            values = velocity.tolist()
            if not math.isfinite(sum(values)):
                raise NoSolutionFound(settings.solver, "the solution is not finite")
            if max(map(abs, values), default=0.0) * dt < settings.tolerance:
                status = "converged"
            else:
                qpos = configuration.data.qpos
                previous = qpos.copy()
                configuration.integrate_inplace(velocity, dt)
                if not math.isfinite(sum(qpos.tolist())):
                    configuration.update(previous)
                    raise NoSolutionFound(settings.solver, "integration gave a non-finite q")
        except PosekitError as exc:
            status, error = "failed", str(exc)
        except (ArithmeticError, ValueError, np.linalg.LinAlgError) as exc:
            status, error = "failed", f"{type(exc).__name__}: {exc}"
        solve_us = (time.perf_counter() - start) * 1e6
        return self._make_state(status, status == "converged", error, solve_us, plan)

    def _make_state(
        self,
        status: Status,
        converged: bool,
        error: str | None,
        solve_us: float,
        plan: _Plan | None = None,
    ) -> SessionState:
        plan = plan or self._current_plan()
        errors: dict[str, float | None] = dict.fromkeys(plan.silent)
        for name, task in plan.error_tasks:
            try:
                vector = task.compute_error(self._configuration)
                errors[name] = math.sqrt(float(vector @ vector))
            except (PosekitError, ArithmeticError, ValueError):
                errors[name] = None
        self._seq += 1
        return SessionState(
            seq=self._seq,
            time=time.time(),
            q=self._configuration.data.qpos.tolist(),
            errors=errors,
            converged=converged,
            status=status,
            error=error,
            solve_us=round(solve_us, 1),
            ref=self._ref,
            revision=self._revision,
        )

    def _current_plan(self) -> _Plan:
        if self._plan is None:
            objectives, constraints, error_tasks, silent = [], [], [], []
            for name, entry in self._tasks.items():
                if not entry.spec.enabled:
                    silent.append(name)
                    continue
                if entry.spec.role == "constraint":
                    constraints.append(entry.task)
                else:
                    objectives.append(entry.task)
                if isinstance(entry.task, Task):
                    error_tasks.append((name, entry.task))
                else:
                    silent.append(name)
            limits = [e.limit for e in self._limits.values() if e.spec.enabled]
            self._plan = _Plan(objectives, constraints, limits, error_tasks, silent)
        return self._plan

    # =============================================================== helpers
    def _changed(self, structural: bool, call: Call) -> None:
        """Record an accepted change (lock held): tell the loop and the subscribers.

        ``call`` replays the change on a session in the previous state (a mirror).
        """
        self._revision += 1
        self.touch()
        if structural:
            self._plan = None
            message = self.tasks_message()
            for subscription in self._subscribers:
                subscription.offer_tasks(message)
        if self._scheduler is not None:
            self._scheduler.changed(self, call)
        if self._on_change is not None:
            self._on_change(self)

    def _build_task_entry(self, spec: TaskSpec, name: str) -> _TaskEntry:
        task = build_task(spec, self.model, self._solver.step_dt)
        target = None
        if targets.takes_target(spec.type):
            task.set_target_from_configuration(self._synced())  # type: ignore[attr-defined]
            target = targets.read(spec.type, task)
            if spec.target is not None:
                target = targets.merge(spec.type, name, target, spec.target, self.model)
                targets.apply(spec.type, task, target)
        elif spec.target is not None:
            raise InvalidRequest(f"task {name!r} of type {spec.type!r} takes no target")
        return _TaskEntry(spec.model_copy(update={"name": name, "target": target}), task)

    def _build_limit_entry(self, spec: LimitSpec, name: str) -> _LimitEntry:
        return _LimitEntry(spec.model_copy(update={"name": name}), build_limit(spec, self.model))

    @staticmethod
    def _default_task_name(spec: TaskSpec) -> str:
        frame = getattr(spec.params, "frame", None)
        if frame is None:
            return spec.type
        return task_name(frame) if spec.type == "frame" else f"{spec.type}_{task_name(frame)}"

    @staticmethod
    def _free_name(base: str, taken: Mapping[str, object]) -> str:
        base = base[:60]
        if base not in taken:
            return base
        n = 2
        while f"{base}_{n}" in taken:
            n += 1
        return f"{base}_{n}"

    @classmethod
    def _spec_name(cls, name: str | None, default: str, taken: Mapping[str, object]) -> str:
        if name is None:
            return cls._free_name(default, taken)
        if name in taken:
            raise NameConflict(f"the spec has two tasks or two limits named {name!r}")
        return name

    def _task_entry(self, name: str) -> _TaskEntry:
        entry = self._tasks.get(name)
        if entry is None:
            raise TaskNotFound(name, self._tasks)
        return entry

    def _limit_entry(self, name: str) -> _LimitEntry:
        entry = self._limits.get(name)
        if entry is None:
            raise LimitNotFound(name, self._limits)
        return entry
