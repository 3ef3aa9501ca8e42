"""Accepted changes of a session as typed values.

A session turns each change it accepts into one of these values, canonical (names given,
targets complete), so that applying it to a session in the previous state (a mirror in
a solver process) gives the same state. They are plain frozen dataclasses of pydantic
models and lists: they pickle across the process boundary. :func:`apply` is the one way
to apply them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from posekit.sessions.kinds import LimitPatch, LimitSpecBase, Target, TaskPatch, TaskSpecBase
from posekit.sessions.session_spec import SessionSpec
from posekit.sessions.solver_settings import SolverPatch


@dataclass(frozen=True)
class AddTask:
    spec: TaskSpecBase  # with its name and canonical target
    structural: ClassVar[bool] = True


@dataclass(frozen=True)
class PatchTask:
    name: str
    patch: TaskPatch
    structural: ClassVar[bool] = True


@dataclass(frozen=True)
class SetTarget:
    task: str
    target: Target  # canonical
    ref: Any = None
    structural: ClassVar[bool] = False


@dataclass(frozen=True)
class RemoveTask:
    name: str
    structural: ClassVar[bool] = True


@dataclass(frozen=True)
class AddLimit:
    spec: LimitSpecBase  # with its name
    structural: ClassVar[bool] = True


@dataclass(frozen=True)
class PatchLimit:
    name: str
    patch: LimitPatch
    structural: ClassVar[bool] = True


@dataclass(frozen=True)
class RemoveLimit:
    name: str
    structural: ClassVar[bool] = True


@dataclass(frozen=True)
class SetSolver:
    patch: SolverPatch
    structural: ClassVar[bool] = True


@dataclass(frozen=True)
class SetQ:
    q: list[float]  # checked: size nq, finite, unit quaternions
    structural: ClassVar[bool] = False


@dataclass(frozen=True)
class ReplaceSpec:
    spec: SessionSpec  # canonical
    structural: ClassVar[bool] = True


Change = (
    AddTask
    | PatchTask
    | SetTarget
    | RemoveTask
    | AddLimit
    | PatchLimit
    | RemoveLimit
    | SetSolver
    | SetQ
    | ReplaceSpec
)
"""Any accepted change; ``structural`` ones change the task stack, a weight or the solver
settings (watchers get a ``tasks`` message), the others move a target or q."""


class Editable(Protocol):
    """What a change is applied to: the public editing methods of a session."""

    def add_task(self, spec: TaskSpecBase) -> TaskSpecBase: ...
    def patch_task(self, name: str, patch: TaskPatch) -> TaskSpecBase: ...
    def set_target(self, task: str, target: Target, ref: Any = None) -> Target: ...
    def remove_task(self, name: str) -> None: ...
    def add_limit(self, spec: LimitSpecBase) -> LimitSpecBase: ...
    def patch_limit(self, name: str, patch: LimitPatch) -> LimitSpecBase: ...
    def remove_limit(self, name: str) -> None: ...
    def set_solver(self, patch: SolverPatch) -> object: ...
    def set_q(self, q: object = None, keyframe: str | None = None) -> list[float]: ...
    def replace_spec(self, spec: SessionSpec) -> SessionSpec: ...


def apply(change: Change, target: Editable) -> None:
    """Apply ``change`` to ``target`` (validated again there, like any change)."""
    match change:
        case AddTask(spec):
            target.add_task(spec)
        case PatchTask(name, patch):
            target.patch_task(name, patch)
        case SetTarget(task, new_target, ref):
            target.set_target(task, new_target, ref)
        case RemoveTask(name):
            target.remove_task(name)
        case AddLimit(spec):
            target.add_limit(spec)
        case PatchLimit(name, patch):
            target.patch_limit(name, patch)
        case RemoveLimit(name):
            target.remove_limit(name)
        case SetSolver(patch):
            target.set_solver(patch)
        case SetQ(q):
            target.set_q(q)
        case ReplaceSpec(spec):
            target.replace_spec(spec)
