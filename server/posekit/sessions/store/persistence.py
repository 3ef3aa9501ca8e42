"""Ordered, final saves of a manager's sessions into a :class:`SessionStore`.

Each session has a save revision and a save lock. A save takes the snapshot *and*
writes it under that lock, with the next revision, so a newer snapshot is never
overtaken by an older one (in this process; the store refuses older revisions from any
writer). A delete takes the same lock, so a save either lands before the delete (and
is deleted with it) or after it, where the store's tombstone refuses it.

Changes mark a session dirty; :meth:`Persistence.flush` saves the dirty ones (the
manager calls it every ``flush_interval`` seconds), and callers that acknowledge a
change save the session at once (:meth:`Persistence.save`).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from posekit.sessions.errors import StorageFailed
from posekit.sessions.store.protocol import NullStore, SessionStore, StoredSession

logger = logging.getLogger(__name__)

TELL_EVERY_S = 5.0  # [s] a session's watchers are told its changes are not stored this often

Snapshot = Callable[[], dict[str, Any]]
"""Takes a session's portable spec (JSON-ready), at the moment of the save."""


@dataclass
class _Record:
    revision: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    told: float = -math.inf  # [s, monotonic] when a failure to store it was last told


class Persistence:
    """Saves and deletes of sessions, in order (module docstring)."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self.enabled = not isinstance(store, NullStore)
        self._records: dict[str, _Record] = {}
        self._dirty: set[str] = set()
        self._lock = threading.Lock()

    def load(self) -> list[StoredSession]:
        """The stored sessions; their saves continue from the stored revisions."""
        stored = list(self.store.load_all())
        with self._lock:
            for session in stored:
                self._records[session.session_id] = _Record(session.revision)
        return stored

    def resume(self, session_id: str, revision: int) -> None:
        """A session read back from the store: its saves continue from ``revision``."""
        with self._lock:
            self._records[session_id] = _Record(revision)

    def forget(self, session_id: str) -> None:
        """Stop saving a session here, without touching the store (another replica
        solves it now)."""
        with self._lock:
            self._dirty.discard(session_id)
            self._records.pop(session_id, None)

    def mark_dirty(self, session_id: str) -> None:
        """The session changed: the next :meth:`flush` saves it."""
        self._dirty.add(session_id)

    def save(self, session_id: str, snapshot: Snapshot) -> bool:
        """Take the session's snapshot and store it with its next revision (in order);
        True when stored, False when the store refused it (an older revision, a deleted
        session, a lost lease). :class:`StorageFailed` when the store cannot write; other
        errors of the store are logged."""
        if not self.enabled:
            return False
        record = self._record(session_id)
        with record.lock:
            spec = snapshot()
            record.revision += 1
            try:
                return self.store.save_session(session_id, spec, record.revision)
            except StorageFailed:
                raise
            except Exception:
                logger.exception("could not save session %s", session_id)
                return False

    def flush(
        self,
        snapshots: Callable[[str], Snapshot | None],
        on_failing: Callable[[str, StorageFailed], None] | None = None,
    ) -> None:
        """Save every session marked dirty since the last flush that ``snapshots`` still
        knows (it returns None for a session that is gone). A session the store cannot
        take stays dirty, and ``on_failing`` hears of it (at most every ``TELL_EVERY_S``
        seconds a session: a drag changes it at every flush)."""
        if not self.enabled:
            return
        with self._lock:
            dirty, self._dirty = self._dirty, set()
        for session_id in dirty:
            snapshot = snapshots(session_id)
            if snapshot is None:
                continue
            try:
                self.save(session_id, snapshot)
            except StorageFailed as failed:  # kept in memory, saved once the store can
                logger.warning("could not save session %s: %s", session_id, failed)
                self.mark_dirty(session_id)
                record, now = self._record(session_id), time.monotonic()
                if on_failing is not None and now - record.told >= TELL_EVERY_S:
                    record.told = now
                    on_failing(session_id, failed)

    def delete(self, session_id: str) -> None:
        """Forget the session for good (ordered after any save under way)."""
        record = self._record(session_id)
        with record.lock:
            self._dirty.discard(session_id)
            self.store.delete_session(session_id)
        with self._lock:
            self._records.pop(session_id, None)

    def _record(self, session_id: str) -> _Record:
        with self._lock:
            record = self._records.get(session_id)
            if record is None:
                record = self._records[session_id] = _Record()
            return record
