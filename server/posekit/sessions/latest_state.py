"""A session's latest state, and the q that states solved elsewhere carry.

States solved by a mirror in a solver process arrive on the reader thread of its pipe.
They take only this object's lock, which is never held across I/O (the session's lock
is held while a change is sent to the solver process), so that thread never waits for
a send. Their q is kept here and applied to the session's configuration lazily, the
next time the session needs it. A state solved before the latest change that set q
(``set_q``, ``replace_spec``) is refused: it would undo that change.
"""

from __future__ import annotations

import threading

from posekit.sessions.state import SessionState


class LatestState:
    """The latest published state, and the solved q not applied yet."""

    def __init__(self, state: SessionState) -> None:
        self.state = state
        self._lock = threading.Lock()
        self._solved_q: list[float] | None = None
        self._q_revision = 0  # the revision of the last change that set q

    def publish(self, state: SessionState) -> None:
        """Make ``state`` (solved here) the latest."""
        with self._lock:
            self.state = state

    def adopt(self, state: SessionState) -> bool:
        """Make ``state`` (solved elsewhere) the latest and keep its q, unless it is not
        newer or was solved before the latest change that set q; whether it was taken."""
        with self._lock:
            if state.seq <= self.state.seq or state.revision < self._q_revision:
                return False
            self._solved_q = state.q
            self.state = state
            return True

    def take_solved_q(self) -> list[float] | None:
        """The q of the latest adopted state if it was not applied yet (then forgotten)."""
        with self._lock:
            q, self._solved_q = self._solved_q, None
            return q

    def q_set_at(self, revision: int) -> None:
        """The change of this revision sets q: states solved before it carry no q."""
        with self._lock:
            self._q_revision = revision
            self._solved_q = None
