"""Sessions persisted in an embedded SQLite database.

One row per session: its id, its portable spec as JSON and the time it was saved.
The database runs in WAL mode with ``synchronous=FULL``: a save that returned is on
disk, and survives the process being killed (SIGKILL) or the machine losing power.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    saved_at REAL NOT NULL
)
"""


class SQLiteStore:
    """A :class:`~posekit.sessions.store.SessionStore` in the SQLite file at ``path``."""

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
            self._connection.execute(SCHEMA)

    def save_session(self, session_id: str, spec: dict[str, Any]) -> None:
        """Insert or replace a session's spec; durable when this returns."""
        payload = json.dumps(spec, separators=(",", ":"))
        with self._lock:
            self._connection.execute(
                "INSERT INTO sessions (id, spec, saved_at) VALUES (?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET spec = excluded.spec, saved_at = excluded.saved_at",
                (session_id, payload, time.time()),
            )

    def delete_session(self, session_id: str) -> None:
        """Forget a session (no error when unknown)."""
        with self._lock:
            self._connection.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    def load_all(self) -> Iterable[tuple[str, dict[str, Any]]]:
        """Every stored ``(session_id, spec)``, oldest save first."""
        with self._lock:
            rows = self._connection.execute(
                "SELECT id, spec FROM sessions ORDER BY saved_at"
            ).fetchall()
        return [(session_id, json.loads(spec)) for session_id, spec in rows]

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._connection.close()
