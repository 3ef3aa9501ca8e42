"""Messages between the server process and a solver process, as typed values.

Server → solver process: :class:`Open`, :class:`Replay`, :class:`Export`,
:class:`Close`, :class:`Stop`. Solver process → server: :class:`States` (one per pass,
each state's JSON already encoded), :class:`Diverged` (a mirror could not be built or a
replayed change failed: re-open it from the spec), :class:`ExportedSpec`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from posekit.sessions.changes import Change
from posekit.sessions.loops.solve_loop import StreamCounters
from posekit.sessions.session_spec import SessionSpec
from posekit.sessions.state import SessionState


@dataclass(frozen=True)
class Open:
    """Build a mirror of a session (replacing an open one); its states carry ``epoch``."""

    session_id: str
    epoch: int
    robot: str
    entry: str
    spec: SessionSpec
    counters: StreamCounters


@dataclass(frozen=True)
class Replay:
    """Apply a change the session accepted; the mirror takes its ``revision``."""

    session_id: str
    revision: int
    change: Change


@dataclass(frozen=True)
class Export:
    """Answer with the mirror's spec (:class:`ExportedSpec`)."""

    session_id: str


@dataclass(frozen=True)
class Close:
    session_id: str


@dataclass(frozen=True)
class Stop:
    """Stop the solver process."""


ToSolver = Open | Replay | Export | Close | Stop


@dataclass(frozen=True)
class Solved:
    session_id: str
    epoch: int
    state: SessionState


@dataclass(frozen=True)
class States:
    states: list[Solved]


@dataclass(frozen=True)
class Diverged:
    session_id: str
    reason: str


@dataclass(frozen=True)
class ExportedSpec:
    session_id: str
    spec: dict[str, Any] | None


FromSolver = States | Diverged | ExportedSpec
