"""A live IK session: a configuration, a task stack, solver settings, a revision and a feed.

Every public method is thread-safe and validates its input completely before it
touches the session (the :class:`~posekit.sessions.stack.TaskStack` validates, then
swaps), so a rejected change leaves the session exactly as it was. Each accepted change
becomes a typed :mod:`~posekit.sessions.changes` value, handed to the solve loop (a
mirror in a solver process applies it), and changes of the stack, of a weight or of the
solver settings are broadcast to every subscriber as a ``tasks`` message.

The session's state, its stream to watchers and the side the solve loop calls
(stepping, adopting states solved by a mirror, opening a mirror) are its base,
:class:`~posekit.sessions.session_core.SessionCore`; this module is the editing API.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import mujoco
from pydantic import BaseModel

from posekit.ik.keyframes import keyframe_q
from posekit.ik.tasks import BaseTask
from posekit.sessions import changes
from posekit.sessions.built_spec import BuiltSpec
from posekit.sessions.errors import InvalidRequest
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
from posekit.sessions.q_check import check_q
from posekit.sessions.reload_report import ReloadReport
from posekit.sessions.session_core import SessionCore
from posekit.sessions.session_spec import SessionSpec
from posekit.sessions.solver_settings import SolverPatch, SolverSettings
from posekit.sessions.subscription import SignalBatch

M = TypeVar("M", bound=BaseModel)
_new = tuple.__new__  # a named tuple's own constructor is a Python function: skip it


def _parse(model: type[M], value: M | Mapping[str, Any]) -> M:
    return value if isinstance(value, model) else model.model_validate(value)


class Session(SessionCore):
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

    # ================================================================ reading
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

    def move_target(self, task: str, given: Mapping[str, Any], ref: Any = None) -> None:
        """:meth:`set_target` for a target given as valid values of :class:`Target`
        fields by name (none None; a stream message, checked against its schema): the same checks,
        errors and canonical target, without building target models on the way (the
        stream's hot path).
        """
        with self._lock:
            model, values = self._stack.move_target(task, given)
            if ref is not None:
                self._ref = ref
            self._changed(_new(changes.MoveTarget, (task, model, values, ref)))

    def move_canonical_target(
        self, task: str, model: int, values: tuple[Any, ...], ref: Any = None
    ) -> None:
        """Take a target the session this one mirrors made canonical (a replayed
        :class:`~posekit.sessions.changes.MoveTarget`; only its model is checked)."""
        with self._lock:
            self._stack.move_canonical_target(task, model, values)
            if ref is not None:
                self._ref = ref
            self._changed(_new(changes.MoveTarget, (task, model, values, ref)))

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
            self._take_solver(settings)
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
            self._take_solver(spec.solver)
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
            self._take_solver(fitted.solver)
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

    # =============================================================== mirrors
    def replay(self, change: changes.Change, revision: int) -> None:
        """Apply a change accepted by the session this one mirrors, and its revision."""
        with self._lock:
            changes.apply(change, self)
            self._revision = revision

    def replay_target(
        self, task: str, model: int, values: tuple[Any, ...], ref: Any, revision: int
    ) -> None:
        """:meth:`replay` of a target the session this one mirrors moved, as canonical
        values (:meth:`move_canonical_target`), and its revision."""
        with self._lock:
            self._stack.move_canonical_target(task, model, values)
            if ref is not None:
                self._ref = ref
            self._changed(_new(changes.MoveTarget, (task, model, values, ref)))
            self._revision = revision
