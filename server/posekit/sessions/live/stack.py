"""The task stack of a session: named tasks and limits, each a spec and its engine object.

Every change is validated completely before anything is replaced: new specs and engine
objects are built first and swapped in only when all of it succeeded (validate, then
swap), so a rejected change leaves the stack exactly as it was. Names are unique per
stack; a task without a name gets its kind's default name, made unique with ``_2``,
``_3``, …; a limit without one gets its type.

The stack is not thread-safe: :class:`~posekit.sessions.live.session.Session` holds its lock
around every call.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mujoco
from pydantic import BaseModel, ValidationError

from posekit.ik.configuration import Configuration
from posekit.ik.limits import Limit
from posekit.ik.tasks import BaseTask, KineticEnergyRegularizationTask, Task
from posekit.sessions.errors import (
    CollisionPairsCapReached,
    InvalidRequest,
    LimitCapReached,
    LimitNotFound,
    NameConflict,
    TaskLimitReached,
    TaskNotFound,
)
from posekit.sessions.kinds import (
    LimitPatch,
    LimitSpecBase,
    Target,
    TaskPatch,
    TaskSpecBase,
    limit_kind,
    task_kind,
)
from posekit.sessions.kinds.base import AnyTaskKind
from posekit.sessions.live.step import Plan
from posekit.sessions.specs.caps import UNLIMITED, StackCaps

MAX_NAME = 60  # a derived base name is cut here, leaving room for "_<n>"


@dataclass(frozen=True)
class TaskEntry:
    """A task: its spec (with its name and canonical target) and its engine task."""

    spec: TaskSpecBase
    task: BaseTask

    @functools.cached_property
    def kind(self) -> AnyTaskKind:
        """The kind of :attr:`spec` (looked up once: a moved target asks it twice)."""
        return task_kind(self.spec)

    @functools.cached_property
    def where(self) -> str:
        """The task as errors about its target name it (made once: every move asks)."""
        return _task_where(self.spec.name, self.spec.type)


def _task_where(name: str | None, type_: str) -> str:
    """How errors about a task's patch or target name it."""
    return f"task {name!r} (type {type_!r})"


@dataclass(frozen=True)
class LimitEntry:
    """A limit: its spec (with its name), its engine limit and the geom pairs it checks."""

    spec: LimitSpecBase
    limit: Limit
    pairs: int = 0


def fits(model: type[BaseModel], patch: BaseModel, what: str) -> None:
    """Raise :class:`InvalidRequest` unless ``patch`` is a valid ``model`` (the PATCH body
    of the task's or limit's own kind), naming the fields it does not take."""
    given = patch.model_dump(exclude_unset=True, exclude_none=True)  # extras included
    try:
        model.model_validate(given)
    except ValidationError as error:
        wrong = sorted({".".join(str(p) for p in e["loc"][:2]) for e in error.errors()})
        raise InvalidRequest(
            f"{what} takes no {', '.join(wrong)}; it takes {', '.join(model.model_fields)}"
        ) from None


def free_name(base: str, taken: Mapping[str, object]) -> str:
    """``base`` (cut to 60 characters), or ``base_2``, ``base_3``, … if it is taken."""
    base = base[:MAX_NAME]
    if base not in taken:
        return base
    n = 2
    while f"{base}_{n}" in taken:
        n += 1
    return f"{base}_{n}"


class TaskStack:
    """Named tasks and limits of one model.

    Args:
        model: The robot model (read only).
        dt: The step duration [s] (kinetic-energy tasks need it).
        caps: What the stack may hold (:class:`StackFull` errors beyond).
    """

    def __init__(self, model: mujoco.MjModel, dt: float, caps: StackCaps = UNLIMITED) -> None:
        self.model = model
        self.caps = caps
        self._dt = dt
        self._tasks: dict[str, TaskEntry] = {}
        self._limits: dict[str, LimitEntry] = {}
        self._plan: Plan | None = None

    @classmethod
    def from_specs(
        cls,
        model: mujoco.MjModel,
        tasks: list[TaskSpecBase],
        limits: list[LimitSpecBase],
        configuration: Configuration,
        dt: float,
        caps: StackCaps = UNLIMITED,
    ) -> TaskStack:
        """A stack holding ``tasks`` and ``limits`` (two with the same name: :class:`NameConflict`)."""
        if caps.max_tasks is not None and len(tasks) > caps.max_tasks:
            raise TaskLimitReached(len(tasks), caps.max_tasks)
        if caps.max_limits is not None and len(limits) > caps.max_limits:
            raise LimitCapReached(len(limits), caps.max_limits)
        stack = cls(model, dt, caps)
        for task_spec in tasks:
            default = task_kind(task_spec).default_name(task_spec)
            name = stack._spec_name(task_spec.name, default, stack._tasks)
            stack._tasks[name] = stack._build_task(task_spec, name, configuration)
        for limit_spec in limits:
            name = stack._spec_name(limit_spec.name, limit_spec.type, stack._limits)
            stack._limits[name] = stack._build_limit(limit_spec, name, stack.collision_pairs())
        return stack

    # ------------------------------------------------------------- reading
    def task_specs(self) -> list[TaskSpecBase]:
        """Task specs in stack order, with their current targets."""
        return [entry.spec for entry in self._tasks.values()]

    def limit_specs(self) -> list[LimitSpecBase]:
        return [entry.spec for entry in self._limits.values()]

    def task(self, name: str) -> TaskEntry:
        entry = self._tasks.get(name)
        if entry is None:
            raise TaskNotFound(name, self._tasks)
        return entry

    def limit(self, name: str) -> LimitEntry:
        entry = self._limits.get(name)
        if entry is None:
            raise LimitNotFound(name, self._limits)
        return entry

    def engine_task(self, name: str) -> BaseTask:
        """The engine task of task ``name``, with its latest target."""
        entry = self._tasks.get(name)
        if entry is None:
            raise TaskNotFound(name, self._tasks)
        return entry.task

    def tasks(self) -> list[TaskEntry]:
        return list(self._tasks.values())

    def plan(self) -> Plan:
        """The enabled engine objects by role; rebuilt only after a structural change."""
        if self._plan is None:
            objectives: list[BaseTask] = []
            constraints: list[Task] = []
            error_tasks: list[tuple[str, Task]] = []
            silent: list[str] = []
            for name, entry in self._tasks.items():
                if not entry.spec.enabled:
                    silent.append(name)
                    continue
                if entry.spec.role == "constraint" and isinstance(entry.task, Task):
                    constraints.append(entry.task)
                else:
                    objectives.append(entry.task)
                if isinstance(entry.task, Task):
                    error_tasks.append((name, entry.task))
                else:
                    silent.append(name)
            enabled = {name: e.limit for name, e in self._limits.items() if e.spec.enabled}
            self._plan = Plan(
                objectives, constraints, list(enabled.values()), error_tasks, silent,
                list(self._tasks), list(enabled),
            )  # fmt: skip
        return self._plan

    # --------------------------------------------------------------- tasks
    def add_task(self, spec: TaskSpecBase, configuration: Configuration) -> TaskSpecBase:
        """Add a task (its target defaults to its value at ``configuration``)."""
        name = spec.name or free_name(task_kind(spec).default_name(spec), self._tasks)
        if name in self._tasks:
            raise NameConflict(f"a task named {name!r} already exists in this session")
        if self.caps.max_tasks is not None and len(self._tasks) >= self.caps.max_tasks:
            raise TaskLimitReached(len(self._tasks) + 1, self.caps.max_tasks)
        entry = self._build_task(spec, name, configuration)
        self._tasks[name] = entry
        self._plan = None
        return entry.spec

    def patch_task(self, name: str, patch: TaskPatch) -> TaskSpecBase:
        """Change costs, gain, lm_damping, axis, target, enabled or role of a task."""
        entry = self.task(name)
        spec = entry.spec
        kind = task_kind(spec)
        fits(kind.patch_model, patch, entry.where)
        updates = patch.param_updates()
        fields = spec.model_dump(exclude={"target"})
        fields["params"].update(updates)
        if patch.enabled is not None:
            fields["enabled"] = patch.enabled
        if patch.role is not None:
            fields["role"] = patch.role
        new_spec = type(spec).model_validate(fields)
        target = spec.target
        if patch.target is not None:
            target = self._merge_target(spec, name, patch.target)
        task = kind.build(new_spec, self.model, self._dt) if updates else entry.task
        if target is not None and (updates or patch.target is not None):
            kind.apply_target(task, target)  # the engine validates before assigning
        new_spec = new_spec.model_copy(update={"target": target})
        self._tasks[name] = TaskEntry(new_spec, task)
        self._plan = None
        return new_spec

    def set_target(self, name: str, target: Target) -> Target:
        """Move a task's target (the hot path of dragging); returns the canonical target."""
        entry = self.task(name)
        merged = self._merge_target(entry.spec, name, target)
        task_kind(entry.spec).apply_target(entry.task, merged)
        self._tasks[name] = TaskEntry(entry.spec.model_copy(update={"target": merged}), entry.task)
        return merged

    def move_target(self, name: str, given: Mapping[str, Any]) -> Target:
        """:meth:`set_target` for an update given as field values by name (valid values
        of :class:`Target` fields: a stream message checked against its schema)."""
        return self.set_target(name, Target.model_construct(**given))

    def remove_task(self, name: str) -> None:
        self.task(name)
        del self._tasks[name]
        self._plan = None

    def set_dt(self, dt: float) -> None:
        """Take a new step duration [s] (kinetic-energy tasks scale with it)."""
        self._dt = dt
        for entry in self._tasks.values():
            if isinstance(entry.task, KineticEnergyRegularizationTask):
                entry.task.set_dt(dt)

    # -------------------------------------------------------------- limits
    def add_limit(self, spec: LimitSpecBase) -> LimitSpecBase:
        """Add a limit (named after its type when no name is given)."""
        name = spec.name or free_name(spec.type, self._limits)
        if name in self._limits:
            raise NameConflict(f"a limit named {name!r} already exists in this session")
        if self.caps.max_limits is not None and len(self._limits) >= self.caps.max_limits:
            raise LimitCapReached(len(self._limits) + 1, self.caps.max_limits)
        entry = self._build_limit(spec, name, self.collision_pairs())
        self._limits[name] = entry
        self._plan = None
        return entry.spec

    def patch_limit(self, name: str, patch: LimitPatch) -> LimitSpecBase:
        """Enable/disable a limit or replace some of its params."""
        entry = self.limit(name)
        fits(
            limit_kind(entry.spec).patch_model, patch, f"limit {name!r} (type {entry.spec.type!r})"
        )
        updates = patch.param_updates()
        fields = entry.spec.model_dump()
        fields["params"].update(updates)
        if patch.enabled is not None:
            fields["enabled"] = patch.enabled
        new_spec = type(entry.spec).model_validate(fields)
        if updates:
            new_entry = self._build_limit(new_spec, name, self.collision_pairs() - entry.pairs)
        else:
            new_entry = LimitEntry(
                new_spec.model_copy(update={"name": name}), entry.limit, entry.pairs
            )
        self._limits[name] = new_entry
        self._plan = None
        return new_spec

    def remove_limit(self, name: str) -> None:
        self.limit(name)
        del self._limits[name]
        self._plan = None

    # ------------------------------------------------------------- helpers
    def _merge_target(self, spec: TaskSpecBase, name: str, update: Target) -> Target:
        """The canonical target of task ``name`` after ``update`` of its current one."""
        shape = task_kind(spec).target_shape
        if shape is None:
            raise InvalidRequest(f"task {name!r} of type {spec.type!r} takes no target")
        return shape.merge(spec.target, update, self.model, _task_where(name, spec.type))

    def _build_task(self, spec: TaskSpecBase, name: str, configuration: Configuration) -> TaskEntry:
        kind = task_kind(spec)
        task = kind.build(spec, self.model, self._dt)
        target = None
        if kind.target_shape is not None:
            task.set_target_from_configuration(configuration)
            target = kind.read_target(task)
            if spec.target is not None:
                current = spec.model_copy(update={"target": target})
                target = self._merge_target(current, name, spec.target)
                kind.apply_target(task, target)
        elif spec.target is not None:
            raise InvalidRequest(f"task {name!r} of type {spec.type!r} takes no target")
        return TaskEntry(spec.model_copy(update={"name": name, "target": target}), task)

    def collision_pairs(self) -> int:
        """Geom pairs the stack's limits check together."""
        return sum(entry.pairs for entry in self._limits.values())

    def _build_limit(self, spec: LimitSpecBase, name: str, pairs_elsewhere: int) -> LimitEntry:
        """Build a limit, refusing it when the stack would check too many pairs."""
        kind = limit_kind(spec)
        pairs = kind.collision_pairs(spec, self.model)
        cap = self.caps.max_collision_pairs
        if cap is not None and pairs and pairs_elsewhere + pairs > cap:
            raise CollisionPairsCapReached(pairs_elsewhere + pairs, cap)
        return LimitEntry(
            spec.model_copy(update={"name": name}), kind.build(spec, self.model), pairs
        )

    @staticmethod
    def _spec_name(name: str | None, default: str, taken: Mapping[str, object]) -> str:
        if name is None:
            return free_name(default, taken)
        if name in taken:
            raise NameConflict(f"the spec has two tasks or two limits named {name!r}")
        return name
