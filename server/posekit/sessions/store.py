"""Persistence hook of the session manager.

A store receives every session's portable spec (``SessionSpec`` as JSON-ready dict)
after changes, forgets deleted sessions, and hands all stored sessions back when the
manager starts, which restores them under their old ids. Saves are coalesced: the
manager saves a changed session at most every ``flush_interval`` seconds (and on
create, delete and shutdown), so a store may do real I/O in ``save_session``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any, Protocol


class SessionStore(Protocol):
    """What :class:`~posekit.sessions.manager.SessionManager` needs from persistence."""

    def save_session(self, session_id: str, spec: dict[str, Any]) -> None:
        """Insert or replace a session's spec."""

    def delete_session(self, session_id: str) -> None:
        """Forget a session (no error when unknown)."""

    def load_all(self) -> Iterable[tuple[str, dict[str, Any]]]:
        """Every stored ``(session_id, spec)``."""


class NullStore:
    """No persistence: sessions live as long as the process (the default)."""

    def save_session(self, session_id: str, spec: dict[str, Any]) -> None:
        return None

    def delete_session(self, session_id: str) -> None:
        return None

    def load_all(self) -> Iterable[tuple[str, dict[str, Any]]]:
        return ()


class MemoryStore:
    """Specs kept in a dict: for tests, and as the reference of the protocol."""

    def __init__(self, initial: dict[str, dict[str, Any]] | None = None) -> None:
        self.specs: dict[str, dict[str, Any]] = dict(initial or {})
        self.saves = 0
        self._lock = threading.Lock()

    def save_session(self, session_id: str, spec: dict[str, Any]) -> None:
        with self._lock:
            self.specs[session_id] = spec
            self.saves += 1

    def delete_session(self, session_id: str) -> None:
        with self._lock:
            self.specs.pop(session_id, None)

    def load_all(self) -> Iterable[tuple[str, dict[str, Any]]]:
        with self._lock:
            return list(self.specs.items())
