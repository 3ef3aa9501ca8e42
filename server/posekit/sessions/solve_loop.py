"""What a session needs from the loop that steps it.

Two loops implement it: :class:`~posekit.sessions.scheduler.Scheduler` steps sessions
on a thread of this process; :class:`~posekit.sessions.solver_processes.SolverProcesses`
mirrors them into solver processes, which step them and send the states back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from posekit.sessions.session import Session

Call = tuple[str, tuple[Any, ...]]
"""An accepted change as a replayable call: a :class:`Session` method name and its
arguments, canonical (names and targets resolved), so that replaying it on a session in
the same state gives the same state."""

REPLAYABLE = frozenset(
    {
        "add_task",
        "patch_task",
        "set_target",
        "remove_task",
        "add_limit",
        "patch_limit",
        "remove_limit",
        "set_solver",
        "replace_spec",
        "set_q",
    }
)
"""The methods a :data:`Call` may name."""


class SolveLoop(Protocol):
    """Steps live sessions at their rates, off the event loop."""

    steps: int
    """Steps taken since start."""
    on_step: Callable[[float], None] | None
    """Called with each step's solve time [µs] (metrics)."""

    def start(self) -> None: ...

    def stop(self, timeout: float = 5.0) -> None: ...

    def attach(self, session: Session) -> None:
        """Start stepping a new session."""

    def changed(self, session: Session, call: Call) -> None:
        """The session accepted a change (its lock held); step it soon."""

    def remove(self, session: Session) -> None:
        """Never step the session again (it was closed)."""
