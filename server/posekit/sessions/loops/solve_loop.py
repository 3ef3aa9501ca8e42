"""What a session needs from the loop that steps it, and what a loop needs of a session."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from posekit.sessions.changes import Change
from posekit.sessions.session_spec import SessionSpec
from posekit.sessions.state import SessionState
from posekit.sessions.subscription import SignalBatch


@dataclass(frozen=True)
class StreamCounters:
    """What a mirror needs besides the spec to continue a session's stream."""

    revision: int
    seq: int
    ref: Any
    encodings: frozenset[str] = frozenset()
    """The encodings the session's watchers send states in (encoded ahead by a mirror)."""


class LoopSession(Protocol):
    """The public interface of a session that solve loops use."""

    @property
    def id(self) -> str: ...
    @property
    def robot(self) -> str: ...
    @property
    def entry(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    @property
    def period(self) -> float: ...
    @property
    def revision(self) -> int: ...

    def step(
        self,
        batch: SignalBatch | None = None,
        throttled: bool = False,
        rate_hz: float | None = None,
    ) -> SessionState:
        """Solve one step now and publish its state (``throttled``: the loop steps this
        session less often than its rate, at ``rate_hz``, to share the loop fairly)."""

    def adopt(self, state: SessionState, batch: SignalBatch) -> None:
        """Publish a state solved elsewhere (by a mirror of this session)."""

    def fail(self, message: str) -> None:
        """Publish a ``failed`` state: the session can no longer be solved."""

    def open_mirror(self, send: Callable[[SessionSpec, StreamCounters], None]) -> bool:
        """Call ``send`` with the spec and counters under the session's lock (so that
        later changes are ordered after it); False, without calling it, when closed."""


Due = tuple[float, LoopSession, bool]
"""A session taken for a pass of a solve loop: when it was due, the session, and whether
for a change (a plain tuple: one is made per step, and a named tuple's constructor is
Python)."""


class SolveLoop(Protocol):
    """Steps live sessions at their rates, off the event loop."""

    on_steps: Callable[[Sequence[float]], None] | None
    """Called with the solve times [µs] of the steps taken (metrics): a batch of states
    at once where they come in batches."""

    @property
    def steps(self) -> int:
        """Steps taken since start."""

    def start(self) -> None: ...

    def stop(self, timeout: float = 5.0) -> None: ...

    def attach(self, session: LoopSession) -> None:
        """Start stepping a new session."""

    def changed(self, session: LoopSession, change: Change) -> None:
        """The session accepted ``change`` (its lock held); step it soon."""

    def remove(self, session: LoopSession) -> None:
        """Never step the session again (it was closed)."""

    def encodings(self, session: LoopSession, encodings: frozenset[str]) -> None:
        """The session's watchers now send states in ``encodings`` (``json``, ``binary``):
        a loop that solves elsewhere encodes them there, once."""
