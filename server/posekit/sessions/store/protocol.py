"""Persistence of sessions: the store protocol, and the stores that need no server.

A store keeps each session's portable spec (``SessionSpec`` as a JSON-ready dict) with a
*save revision*: a per-session counter that the manager increases with every snapshot
it takes (and continues from the stored value after a restart). Two guarantees make
concurrent and late writers harmless:

- **ordered**: a save lands only if its revision is newer than the stored one, so an
  older snapshot that arrives late never overwrites a newer one;
- **final deletes**: a deleted session is remembered (a tombstone), so no save that
  was in flight when it was deleted can bring it back.

The manager hands all stored sessions back when it starts, which restores them under
their old ids.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any, NamedTuple, Protocol, runtime_checkable


class StoredSession(NamedTuple):
    """A session as a store holds it."""

    session_id: str
    spec: dict[str, Any]
    revision: int


class SessionStore(Protocol):
    """What :class:`~posekit.sessions.manager.SessionManager` needs from persistence."""

    kind: str
    """``none``, ``memory``, ``sqlite`` or ``postgresql`` (``/api/health``)."""

    def ping(self) -> bool:
        """Whether the database answers now (True for stores without one)."""

    def save_session(self, session_id: str, spec: dict[str, Any], revision: int) -> bool:
        """Store ``spec`` unless the stored revision is as new or newer, or the session
        was deleted; True when stored (durable when this returns)."""

    def delete_session(self, session_id: str) -> None:
        """Forget a session for good (no error when unknown)."""

    def load_all(self) -> Iterable[StoredSession]:
        """Every stored session that was not deleted."""


@runtime_checkable
class TakeStore(Protocol):
    """What the takes of sessions need from persistence (a store may also keep them)."""

    def save_take(self, session_id: str, take_id: str, take: dict[str, Any]) -> None:
        """Store a take of a session (durable when this returns; nothing for a deleted
        session)."""

    def load_takes(self, session_id: str) -> list[dict[str, Any]]:
        """The session's stored takes, oldest first."""

    def delete_take(self, session_id: str, take_id: str) -> None:
        """Forget a take (no error when unknown); a session's delete deletes its takes."""


class NullStore:
    """No persistence: sessions live as long as the process (the default)."""

    kind = "none"

    def ping(self) -> bool:
        return True

    def save_session(self, session_id: str, spec: dict[str, Any], revision: int) -> bool:
        return False

    def delete_session(self, session_id: str) -> None:
        return None

    def load_all(self) -> Iterable[StoredSession]:
        return ()


class MemoryStore:
    """Specs kept in a dict: for tests, and as the reference of the protocol."""

    kind = "memory"

    def __init__(self, initial: dict[str, dict[str, Any]] | None = None) -> None:
        self.specs: dict[str, dict[str, Any]] = dict(initial or {})
        self.revisions: dict[str, int] = dict.fromkeys(self.specs, 0)
        self.deleted: set[str] = set()
        self.takes: dict[str, dict[str, dict[str, Any]]] = {}
        self.saves = 0
        self._lock = threading.Lock()

    def save_session(self, session_id: str, spec: dict[str, Any], revision: int) -> bool:
        with self._lock:
            if session_id in self.deleted or revision <= self.revisions.get(session_id, -1):
                return False
            self.specs[session_id] = spec
            self.revisions[session_id] = revision
            self.saves += 1
            return True

    def delete_session(self, session_id: str) -> None:
        with self._lock:
            self.deleted.add(session_id)
            self.takes.pop(session_id, None)
            self.specs.pop(session_id, None)
            self.revisions.pop(session_id, None)

    def load_all(self) -> Iterable[StoredSession]:
        with self._lock:
            return [
                StoredSession(sid, spec, self.revisions[sid]) for sid, spec in self.specs.items()
            ]

    def save_take(self, session_id: str, take_id: str, take: dict[str, Any]) -> None:
        with self._lock:
            if session_id not in self.deleted:
                self.takes.setdefault(session_id, {})[take_id] = take

    def load_takes(self, session_id: str) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.takes.get(session_id, {}).values())

    def delete_take(self, session_id: str, take_id: str) -> None:
        with self._lock:
            self.takes.get(session_id, {}).pop(take_id, None)

    def ping(self) -> bool:
        return True
