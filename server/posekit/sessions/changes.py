"""Accepted changes of a session as typed values.

A session turns each change it accepts into one of these values, canonical (names given,
targets complete), so that applying it to a session in the previous state (a mirror in
a solver process) gives the same state. They are named tuples of pydantic models and
lists: they pickle across the process boundary cheaply. :func:`apply` is the one way to
apply them.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

from posekit.sessions.kinds import LimitPatch, LimitSpecBase, Target, TaskPatch, TaskSpecBase
from posekit.sessions.kinds.target import packed_target, target_of_values
from posekit.sessions.session_spec import SessionSpec
from posekit.sessions.solver_settings import SolverPatch


class AddTask(NamedTuple):
    spec: TaskSpecBase  # with its name and canonical target


class PatchTask(NamedTuple):
    name: str
    patch: TaskPatch


class SetTarget(NamedTuple):
    task: str
    target: Target  # canonical
    ref: Any = None

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as one function and plain values: the hot change (a target per client
        message) names one global instead of three (this class, the target's model
        and its restoring function; pickle imports the module of each, several µs)."""
        model, values = packed_target(self.target)
        return _set_target, (self.task, model, values, self.ref)


def _set_target(task: str, model: int, values: tuple[Any, ...], ref: Any) -> SetTarget:
    return SetTarget(task, target_of_values(model, values), ref)


class MoveTarget(NamedTuple):
    """:class:`SetTarget` with the canonical target as plain values (the hot path of
    dragging: :meth:`~posekit.sessions.session.Session.move_target`)."""

    task: str
    model: int  # the target's model, as an index in TARGET_MODELS
    values: tuple[Any, ...]  # its field values in TARGET_FIELDS order (canonical)
    ref: Any = None


class RemoveTask(NamedTuple):
    name: str


class AddLimit(NamedTuple):
    spec: LimitSpecBase  # with its name


class PatchLimit(NamedTuple):
    name: str
    patch: LimitPatch


class RemoveLimit(NamedTuple):
    name: str


class SetSolver(NamedTuple):
    patch: SolverPatch


class SetQ(NamedTuple):
    q: list[float]  # checked: size nq, finite, unit quaternions


class ReplaceSpec(NamedTuple):
    spec: SessionSpec  # canonical


class ReloadModel(NamedTuple):
    """The session's robot model was compiled again (its files changed) and ``spec`` (as
    fitted to the new model) swapped in. Never replayed: a mirror is rebuilt from the
    spec on the new model instead (the solver processes re-open it)."""

    spec: SessionSpec  # canonical


Change = (
    AddTask
    | PatchTask
    | SetTarget
    | MoveTarget
    | RemoveTask
    | AddLimit
    | PatchLimit
    | RemoveLimit
    | SetSolver
    | SetQ
    | ReplaceSpec
    | ReloadModel
)
"""Any accepted change."""


MOVES = frozenset({SetTarget, MoveTarget, SetQ})
"""The change types that move a target or q. Any other change is structural: it changes
the task stack, a weight or the solver settings (watchers then get a ``tasks`` message).
Test ``type(change) in MOVES``: the change types are final (no subclasses)."""


class Editable(Protocol):
    """What a change is applied to: the public editing methods of a session."""

    def add_task(self, spec: TaskSpecBase) -> TaskSpecBase: ...
    def patch_task(self, name: str, patch: TaskPatch) -> TaskSpecBase: ...
    def set_target(self, task: str, target: Target, ref: Any = None) -> Target: ...
    def move_canonical_target(
        self, task: str, model: int, values: tuple[Any, ...], ref: Any = None
    ) -> None: ...
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
        case MoveTarget(task, model, values, ref):
            target.move_canonical_target(task, model, values, ref)
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
        case ReloadModel():
            raise TypeError("a model reload is not replayed: the mirror is rebuilt instead")
