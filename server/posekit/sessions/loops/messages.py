"""Messages between the server process and a solver process, as typed values.

Named tuples: typed fields, and they pickle as compactly and quickly as plain tuples
(thousands cross the pipe every second).

Server → solver process: :class:`Open`, :class:`Replay`, :data:`TargetMove` (a moved
target, the one message that is a plain tuple), :class:`Export`, :class:`Close`,
:class:`RobotChanged`, :class:`Stop`, :class:`Consumed`, and :class:`Batch` (several
replays at once). Solver process → server: :class:`States` (one per pass,
each state's JSON already encoded; sent as :class:`StateRows`), :class:`Diverged` (a mirror could not be built or a
replayed change failed: re-open it from the spec), :class:`ExportedSpec`, :class:`Ready`
(first, once the process is warm).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from posekit.robots.local_robots import LocalRobot
from posekit.sessions.changes import Change, MoveTarget, SetTarget
from posekit.sessions.kinds.target import packed_target
from posekit.sessions.loops.solve_loop import StreamCounters
from posekit.sessions.session_spec import SessionSpec
from posekit.sessions.state import SessionState, from_wire


class Open(NamedTuple):
    """Build a mirror of a session (replacing an open one); its states carry ``epoch``."""

    session_id: str
    epoch: int
    robot: str
    entry: str
    spec: SessionSpec
    counters: StreamCounters


class Replay(NamedTuple):
    """Apply a change the session accepted; the mirror takes its ``revision``."""

    session_id: str
    revision: int
    change: Change


TargetMove = tuple[str, int, str, int, tuple[Any, ...], Any]
"""A target a session moved — a :class:`~posekit.sessions.changes.SetTarget` or
:class:`~posekit.sessions.changes.MoveTarget` change, the hot message (one per client
target applied) — as the plain tuple ``(session_id, revision, task, model, values,
ref)``: ``model`` and ``values`` are the canonical target packed
(:func:`~posekit.sessions.kinds.target.packed_target`). The mirror takes it as it is
(:meth:`~posekit.sessions.session.Session.move_canonical_target`: the session checked
and completed it) and takes ``revision``. The only message to the solver process that
is not a named tuple: pickled, it names no class, so unpickling imports nothing (each
class named costs a lookup of several µs per message)."""


def replay_of(session_id: str, revision: int, change: Change) -> Replay | TargetMove:
    """The message that replays a session's accepted ``change`` (at ``revision``) on its
    mirror: a :data:`TargetMove` for a target change, else a :class:`Replay`."""
    if isinstance(change, MoveTarget):
        return (session_id, revision, change.task, change.model, change.values, change.ref)
    if isinstance(change, SetTarget):
        model, values = packed_target(change.target)
        return (session_id, revision, change.task, model, values, change.ref)
    return Replay(session_id, revision, change)


class Encode(NamedTuple):
    """Encode the mirror's states ahead in ``encodings`` (``json``, ``binary``)."""

    session_id: str
    encodings: frozenset[str]


class Export(NamedTuple):
    """Answer with the mirror's spec (:class:`ExportedSpec`)."""

    session_id: str


class Close(NamedTuple):
    session_id: str


class RobotChanged(NamedTuple):
    """A robot from files was added, removed (``robot`` None) or its files changed: the
    solver process's registry takes the record and forgets the robot's compiled models
    (the server process then re-opens the mirrors that must use the new model)."""

    name: str
    robot: LocalRobot | None


class Stop(NamedTuple):
    """Stop the solver process."""

    reason: str = "stop"


class Consumed(NamedTuple):
    """The server process's watchers have taken the oldest unanswered :class:`States`
    (:mod:`~posekit.sessions.loops.batch_credit`)."""


NamedToSolver = Open | Replay | Encode | Export | Close | RobotChanged | Stop | Consumed
"""The messages to a solver process but :data:`TargetMove` (named tuples, each its class)."""
ToSolver = NamedToSolver | TargetMove


class Batch(NamedTuple):
    """The :class:`Replay` and :class:`Consumed` messages of one event-loop turn of the
    server process, in the order they were sent: one pickle and one write instead of one
    per message."""

    messages: list[ToSolver]


class Solved(NamedTuple):
    session_id: str
    epoch: int
    state: SessionState


class States(NamedTuple):
    states: list[Solved]

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as plain tuples ``(session_id, epoch, state.wire())``: a named tuple
        or a state pickled as such costs a reduce call each (about 3 µs a state in
        all, against 0.7 µs)."""
        rows = [(session_id, epoch, state.wire()) for session_id, epoch, state in self.states]
        return _states, (rows,)


class StateRows(NamedTuple):
    """:class:`States` as a solver process sends them: rows ``(session_id, epoch,
    state.wire())``, made as the pass publishes (no :class:`Solved` a state). It
    pickles as :class:`States` does, so the server process receives :class:`States`."""

    rows: list[tuple[str, int, tuple[Any, ...]]]

    def __reduce__(self) -> tuple[Any, ...]:
        return _states, (self.rows,)


class Diverged(NamedTuple):
    session_id: str
    reason: str


class ExportedSpec(NamedTuple):
    session_id: str
    spec: dict[str, Any] | None


class Ready(NamedTuple):
    """The solver process is warm (imports done, kernels compiled) and serves."""


FromSolver = States | StateRows | Diverged | ExportedSpec | Ready


def _states(rows: list[tuple[str, int, tuple[Any, ...]]]) -> States:
    """The :class:`States` of its pickled rows (:meth:`States.__reduce__`)."""
    solved = tuple.__new__  # Solved's own constructor is a Python function: skip it
    return States([solved(Solved, (sid, epoch, from_wire(row))) for sid, epoch, row in rows])
