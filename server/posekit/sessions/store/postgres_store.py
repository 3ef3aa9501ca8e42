"""Sessions persisted in PostgreSQL, fenced by the leases of the cluster.

The same two guarantees as :class:`~posekit.sessions.store.sqlite_store.SQLiteStore` (see
:mod:`posekit.sessions.store.protocol`): a save lands only if its revision is newer, and a
delete is final (a tombstone in ``deleted_sessions``). A third one makes several
replicas safe: a save or a delete lands only while this replica holds the session's
lease *with the epoch it was given* (:class:`~.postgres_leases.PostgresLeases`).

A save is one statement: it locks the lease row ``FOR SHARE`` when the row names this
replica and its epoch, and upserts the session only then. A takeover updates that row,
so it waits for a save under way to commit (and then reads it), or the save waits for
the takeover and finds the epoch changed (refused). Every save that returned True is
therefore in the spec the next owner restores. Commits are durable (PostgreSQL's
``synchronous_commit`` default).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from psycopg.types.json import Json

from posekit.sessions.cluster.postgres_leases import PostgresLeases
from posekit.sessions.errors import NotOwner
from posekit.sessions.store.postgres_database import PostgresDatabase
from posekit.sessions.store.protocol import StoredSession

SAVE = """
WITH fence AS (
    SELECT 1 FROM leases
    WHERE session_id = %(id)s AND owner = %(owner)s AND epoch = %(epoch)s
    FOR SHARE
)
INSERT INTO sessions (id, spec, revision)
SELECT %(id)s, %(spec)s, %(revision)s
WHERE EXISTS (SELECT 1 FROM fence)
  AND NOT EXISTS (SELECT 1 FROM deleted_sessions WHERE id = %(id)s)
ON CONFLICT (id) DO UPDATE SET spec = excluded.spec, revision = excluded.revision, saved_at = now()
WHERE sessions.revision < excluded.revision
"""
SAVE_TAKE = """
INSERT INTO takes (session_id, id, take)
SELECT %(session)s, %(id)s, %(take)s
WHERE NOT EXISTS (SELECT 1 FROM deleted_sessions WHERE id = %(session)s)
ON CONFLICT (session_id, id) DO UPDATE SET take = excluded.take, saved_at = now()
"""
LOCK_LEASE = """
INSERT INTO leases (session_id, owner, epoch, expires_at) VALUES (%s, NULL, 0, now())
ON CONFLICT (session_id) DO UPDATE SET epoch = leases.epoch
RETURNING owner, epoch
"""
"""Locks the session's lease row; when there is none, a placeholder (epoch 0, deleted
with the session) makes a lease created meanwhile wait for the delete (and its saves
then see the tombstone)."""


class PostgresStore:
    """A :class:`~posekit.sessions.store.protocol.SessionStore` in PostgreSQL whose writes are
    fenced by ``leases`` (module docstring)."""

    kind = "postgresql"

    def __init__(self, database: PostgresDatabase, leases: PostgresLeases) -> None:
        self.database = database
        self.leases = leases

    def save_session(self, session_id: str, spec: dict[str, Any], revision: int) -> bool:
        """Store the spec if its revision is newer, the session was not deleted and this
        replica holds its lease with its epoch; durable when this returns True."""
        epoch = self.leases.epoch_of(session_id)
        if epoch is None:
            return False
        values = {
            "id": session_id,
            "owner": self.leases.replica_id,
            "epoch": epoch,
            "spec": Json(spec),
            "revision": revision,
        }
        with self.database.connection() as connection:
            return connection.execute(SAVE, values).rowcount > 0

    def delete_session(self, session_id: str) -> None:
        """Forget a session for good: its row and lease go, a tombstone stays. Refused
        (:class:`NotOwner`) while another replica, or another epoch, holds its lease."""
        with self.database.connection() as connection, connection.transaction():
            lease = connection.execute(LOCK_LEASE, (session_id,)).fetchone()
            epoch = self.leases.epoch_of(session_id)  # after the lock: a take has finished
            held = lease is None or lease[1] == 0 or tuple(lease) == (self.leases.replica_id, epoch)
            if not held:
                raise NotOwner(session_id, lease[0])  # type: ignore[index]
            connection.execute(
                "INSERT INTO deleted_sessions (id) VALUES (%s) ON CONFLICT DO NOTHING",
                (session_id,),
            )
            connection.execute("DELETE FROM sessions WHERE id = %s", (session_id,))
            connection.execute("DELETE FROM takes WHERE session_id = %s", (session_id,))
            connection.execute("DELETE FROM leases WHERE session_id = %s", (session_id,))
        self.leases.forget(session_id)

    def save_take(self, session_id: str, take_id: str, take: dict[str, Any]) -> None:
        """Store a take of a session (not of a deleted one); durable when this returns."""
        with self.database.connection() as connection:
            connection.execute(
                SAVE_TAKE, {"session": session_id, "id": take_id, "take": Json(take)}
            )

    def load_takes(self, session_id: str) -> list[dict[str, Any]]:
        with self.database.connection() as connection:
            rows = connection.execute(
                "SELECT take FROM takes WHERE session_id = %s ORDER BY saved_at", (session_id,)
            ).fetchall()
        return [row[0] for row in rows]

    def delete_take(self, session_id: str, take_id: str) -> None:
        with self.database.connection() as connection:
            connection.execute(
                "DELETE FROM takes WHERE session_id = %s AND id = %s", (session_id, take_id)
            )

    def load_all(self) -> Iterable[StoredSession]:
        """Every stored session, oldest save first."""
        with self.database.connection() as connection:
            rows = connection.execute(
                "SELECT id, spec, revision FROM sessions ORDER BY saved_at"
            ).fetchall()
        return [StoredSession(sid, spec, int(rev)) for sid, spec, rev in rows]

    def ping(self) -> bool:
        """Whether the database answers."""
        return self.database.ping()
