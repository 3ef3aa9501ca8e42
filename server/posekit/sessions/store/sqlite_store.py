"""Sessions persisted in an embedded SQLite database.

One row per session: its id, its portable spec as JSON, its save revision and the time
it was saved; and one row per deleted session id (a tombstone). A save is one
statement — an upsert that lands only if the revision is newer and no tombstone names
the session (:mod:`posekit.sessions.store.protocol`). The database runs in WAL mode with
``synchronous=FULL``: a save that returned is on disk, and survives the process being
killed (SIGKILL) or the machine losing power.

Databases written before revisions existed are migrated when opened (the column is
added with revision 0). Tombstones are a few bytes each and are never dropped: session
ids are random, so a tombstone never hides a new session.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from posekit.sessions.errors import StorageFailed
from posekit.sessions.store.protocol import StoredSession


@contextmanager
def _writing() -> Iterator[None]:
    """SQLite's write errors as :class:`StorageFailed` (``full`` for SQLITE_FULL)."""
    try:
        yield
    except sqlite3.Error as error:
        full = getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
        raise StorageFailed(str(error), full=full or "full" in str(error)) from error


SCHEMA = (
    """CREATE TABLE IF NOT EXISTS sessions (
        id TEXT PRIMARY KEY,
        spec TEXT NOT NULL,
        saved_at REAL NOT NULL,
        revision INTEGER NOT NULL DEFAULT 0
    )""",
    """CREATE TABLE IF NOT EXISTS deleted_sessions (
        id TEXT PRIMARY KEY,
        deleted_at REAL NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS takes (
        session_id TEXT NOT NULL,
        id TEXT NOT NULL,
        take TEXT NOT NULL,
        saved_at REAL NOT NULL,
        PRIMARY KEY (session_id, id)
    )""",
)
SAVE_TAKE = """
INSERT INTO takes (session_id, id, take, saved_at)
SELECT ?1, ?2, ?3, ?4 WHERE NOT EXISTS (SELECT 1 FROM deleted_sessions WHERE id = ?1)
ON CONFLICT(session_id, id) DO UPDATE SET take = excluded.take, saved_at = excluded.saved_at
"""
SAVE = """
INSERT INTO sessions (id, spec, saved_at, revision)
SELECT ?1, ?2, ?3, ?4 WHERE NOT EXISTS (SELECT 1 FROM deleted_sessions WHERE id = ?1)
ON CONFLICT(id) DO UPDATE SET
    spec = excluded.spec, saved_at = excluded.saved_at, revision = excluded.revision
WHERE excluded.revision > sessions.revision
"""


class SQLiteStore:
    """A :class:`~posekit.sessions.store.protocol.SessionStore` in the SQLite file at ``path``."""

    kind = "sqlite"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._connection = sqlite3.connect(
            str(self.path), check_same_thread=False, isolation_level=None, timeout=30.0
        )
        with self._lock:
            self._connection.execute("PRAGMA journal_mode=WAL")
            self._connection.execute("PRAGMA synchronous=FULL")
            for statement in SCHEMA:
                self._connection.execute(statement)
            columns = {row[1] for row in self._connection.execute("PRAGMA table_info(sessions)")}
            if "revision" not in columns:  # a database from before revisions
                self._connection.execute(
                    "ALTER TABLE sessions ADD COLUMN revision INTEGER NOT NULL DEFAULT 0"
                )

    def save_session(self, session_id: str, spec: dict[str, Any], revision: int) -> bool:
        """Store the spec if its revision is newer and the session was not deleted;
        durable when this returns."""
        payload = json.dumps(spec, separators=(",", ":"))
        with self._lock, _writing():
            cursor = self._connection.execute(SAVE, (session_id, payload, time.time(), revision))
            return cursor.rowcount > 0

    def delete_session(self, session_id: str) -> None:
        """Forget a session for good (no error when unknown): its row goes, a tombstone stays."""
        with self._lock, _writing():
            self._connection.execute("BEGIN IMMEDIATE")
            try:
                self._connection.execute(
                    "INSERT OR IGNORE INTO deleted_sessions (id, deleted_at) VALUES (?, ?)",
                    (session_id, time.time()),
                )
                self._connection.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
                self._connection.execute("DELETE FROM takes WHERE session_id = ?", (session_id,))
                self._connection.execute("COMMIT")
            except BaseException:
                if self._connection.in_transaction:  # SQLite may have rolled it back itself
                    self._connection.execute("ROLLBACK")
                raise

    def save_take(self, session_id: str, take_id: str, take: dict[str, Any]) -> None:
        """Store a take of a session (durable when this returns)."""
        payload = json.dumps(take, separators=(",", ":"))
        with self._lock, _writing():
            self._connection.execute(SAVE_TAKE, (session_id, take_id, payload, time.time()))

    def load_takes(self, session_id: str) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._connection.execute(
                "SELECT take FROM takes WHERE session_id = ? ORDER BY saved_at", (session_id,)
            ).fetchall()
        return [json.loads(row[0]) for row in rows]

    def delete_take(self, session_id: str, take_id: str) -> None:
        with self._lock, _writing():
            self._connection.execute(
                "DELETE FROM takes WHERE session_id = ? AND id = ?", (session_id, take_id)
            )

    def load_all(self) -> Iterable[StoredSession]:
        """Every stored session, oldest save first."""
        with self._lock:
            rows = self._connection.execute(
                "SELECT id, spec, revision FROM sessions ORDER BY saved_at"
            ).fetchall()
        return [StoredSession(sid, json.loads(spec), int(rev)) for sid, spec, rev in rows]

    def ping(self) -> bool:
        """Whether the database file answers a query."""
        try:
            with self._lock:
                self._connection.execute("SELECT 1").fetchone()
        except sqlite3.Error:
            return False
        return True

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._connection.close()
