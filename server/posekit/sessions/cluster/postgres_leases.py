"""Leases of sessions in PostgreSQL: one owner per session, fenced by an epoch.

A lease row ``(session_id, owner, epoch, expires_at)`` says which replica solves the
session and until when. Expiry is on the database's clock (``now()`` of the server),
never a replica's: replicas whose clocks disagree still agree on who holds a lease.
Every statement below is one atomic compare-and-set:

- **create**: a new session's lease, epoch 1, on the creating replica;
- **take**: a stored session whose lease is free (``owner`` NULL: an idle session),
  expired, or this replica's, becomes this replica's with ``epoch + 1``;
- **sweep**: up to N expired leases (``FOR UPDATE SKIP LOCKED``: replicas sweeping
  together take disjoint batches) become this replica's with ``epoch + 1``;
- **renew**: every lease this replica holds, with the epoch it holds it at, is extended
  by the lifetime; those the statement did not find are lost (taken over);
- **release**: a lease expires at once (shutdown) or is freed (``owner`` NULL, idle).

The epochs held are kept here (:meth:`PostgresLeases.epoch_of`); the store's saves and
deletes carry them (:mod:`.postgres_store`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import Any

import psycopg

from posekit.sessions.cluster.leases import ClusterEntry, TakenSession
from posekit.sessions.errors import DatabaseUnavailable, NotOwner, SessionNotFound
from posekit.sessions.store.postgres_database import PostgresDatabase

logger = logging.getLogger(__name__)

LIFETIME = "make_interval(secs => %(ttl)s)"
CREATE = f"""
INSERT INTO leases (session_id, owner, epoch, expires_at)
VALUES (%(id)s, %(me)s, 1, now() + {LIFETIME})
ON CONFLICT (session_id) DO NOTHING
RETURNING epoch
"""
TAKE = f"""
INSERT INTO leases (session_id, owner, epoch, expires_at)
SELECT s.id, %(me)s, 1, now() + {LIFETIME} FROM sessions s WHERE s.id = %(id)s
ON CONFLICT (session_id) DO UPDATE
SET owner = excluded.owner, epoch = leases.epoch + 1, expires_at = excluded.expires_at
WHERE leases.owner IS NULL OR leases.expires_at < now() OR leases.owner = excluded.owner
RETURNING epoch
"""
SWEEP = f"""
WITH expired AS (
    SELECT session_id FROM leases
    WHERE owner IS NOT NULL AND (expires_at < now() OR owner = %(me)s)
      AND NOT (session_id = ANY(%(held)s::text[]))
    ORDER BY expires_at
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE leases l SET owner = %(me)s, epoch = l.epoch + 1, expires_at = now() + {LIFETIME}
FROM expired WHERE l.session_id = expired.session_id
RETURNING l.session_id, l.epoch
"""
RENEW = f"""
UPDATE leases l SET expires_at = now() + {LIFETIME}
FROM unnest(%(ids)s::text[], %(epochs)s::bigint[]) AS mine(session_id, epoch)
WHERE l.session_id = mine.session_id AND l.owner = %(me)s AND l.epoch = mine.epoch
RETURNING l.session_id
"""
READ = """
SELECT id, spec, revision, extract(epoch FROM created_at) FROM sessions WHERE id = ANY(%s::text[])
"""
ORPHANS = "DELETE FROM leases WHERE session_id = ANY(%s::text[]) AND owner = %s"
LISTING = """
SELECT s.id, s.spec, extract(epoch FROM s.created_at), l.owner,
       coalesce(l.owner IS NOT NULL AND l.expires_at > now(), false)
FROM sessions s LEFT JOIN leases l ON l.session_id = s.id
ORDER BY s.created_at
"""


class PostgresLeases:
    """The leases of replica ``replica_id`` in ``database``, each ``ttl_s`` seconds long
    (module docstring; :class:`~posekit.sessions.cluster.leases.Leases`)."""

    clustered = True

    def __init__(self, database: PostgresDatabase, replica_id: str, ttl_s: float) -> None:
        self.database = database
        self.replica_id = replica_id
        self.ttl_s = ttl_s
        self.takeovers = 0
        self.renew_failures = 0
        self._epochs: dict[str, int] = {}
        # Lease statements of this replica one at a time (a take and a sweep never race
        # for the same session here); the epochs held under a lock of their own, never
        # held across a statement (a save or delete in a transaction reads them).
        self._statements = threading.Lock()
        self._lock = threading.Lock()

    def start(self) -> None:
        self.database.migrate()

    def close(self) -> None:
        self.database.close()

    def epoch_of(self, session_id: str) -> int | None:
        """The epoch this replica holds the session's lease at (None: not held)."""
        with self._lock:
            return self._epochs.get(session_id)

    def held(self) -> set[str]:
        with self._lock:
            return set(self._epochs)

    def create(self, session_id: str) -> None:
        with self._statements, self.database.connection() as connection:
            row = connection.execute(CREATE, self._values(id=session_id)).fetchone()
            if row is None:
                raise NotOwner(session_id, None)
            with self._lock:
                self._epochs[session_id] = int(row[0])

    def take(self, session_id: str) -> TakenSession:
        with self._statements, self.database.connection() as connection:
            row = connection.execute(TAKE, self._values(id=session_id)).fetchone()
            if row is None:
                raise self._why_not(session_id)
            with self._lock:
                previous = self._epochs.get(session_id)
                self._epochs[session_id] = epoch = int(row[0])
            if previous is None and epoch > 1:
                self.takeovers += 1
            stored = self._read(connection, [session_id])
        if not stored:  # deleted between the two statements
            self.forget(session_id)
            raise SessionNotFound(session_id)
        return stored[0]

    def sweep(self, limit: int) -> list[TakenSession]:
        if limit <= 0:
            return []
        with self._statements, self.database.connection() as connection:
            values = self._values(held=list(self.held()), limit=limit)
            taken = connection.execute(SWEEP, values).fetchall()
            stored = self._read(connection, [session_id for session_id, _ in taken])
            found = {session.session_id for session in stored}
            orphans = [session_id for session_id, _ in taken if session_id not in found]
            if orphans:  # leases of sessions never stored (their creation failed)
                connection.execute(ORPHANS, (orphans, self.replica_id))
            with self._lock:
                for session_id, epoch in taken:
                    if session_id in found:
                        self._epochs[session_id] = int(epoch)
            self.takeovers += len(found)
            return stored

    def renew(self) -> list[str]:
        with self._lock:
            held = dict(self._epochs)
        if not held:
            return []
        values = self._values(ids=list(held), epochs=list(held.values()))
        try:
            with self.database.connection() as connection:
                renewed = {row[0] for row in connection.execute(RENEW, values).fetchall()}
        except DatabaseUnavailable:
            self.renew_failures += 1
            raise
        with self._lock:  # a lease taken again meanwhile (a newer epoch) is not lost
            lost = [
                sid for sid in held if sid not in renewed and self._epochs.get(sid) == held[sid]
            ]
            for session_id in lost:
                del self._epochs[session_id]
        if lost:
            self.renew_failures += 1
        return lost

    def release(self, session_id: str, *, dormant: bool) -> None:
        with self._lock:
            epoch = self._epochs.pop(session_id, None)
        if epoch is None:
            return
        owner = "NULL" if dormant else "owner"
        try:
            with self.database.connection() as connection:
                connection.execute(
                    f"UPDATE leases SET owner = {owner}, expires_at = now() "
                    "WHERE session_id = %s AND owner = %s AND epoch = %s",
                    (session_id, self.replica_id, epoch),
                )
        except DatabaseUnavailable as error:
            logger.warning("could not release the lease of %s: %s", session_id, error)

    def release_all(self) -> None:
        with self._lock:
            held, self._epochs = self._epochs, {}
        if not held:
            return
        try:
            with self.database.connection() as connection:
                connection.execute(
                    "UPDATE leases SET expires_at = now() "
                    "WHERE owner = %s AND session_id = ANY(%s)",
                    (self.replica_id, list(held)),
                )
        except DatabaseUnavailable as error:
            logger.warning("could not release %d leases: %s", len(held), error)

    def forget(self, session_id: str) -> None:
        with self._lock:
            self._epochs.pop(session_id, None)

    def refusal(self, session_id: str) -> Exception:
        try:
            return self._why_not(session_id)
        except DatabaseUnavailable as error:
            return error

    def listing(self) -> Iterable[ClusterEntry]:
        with self.database.connection() as connection:
            rows = connection.execute(LISTING).fetchall()
        return [
            ClusterEntry(sid, spec, float(made), owner, bool(live))
            for sid, spec, made, owner, live in rows
        ]

    def _why_not(self, session_id: str) -> Exception:
        """Why this replica cannot take (or save) the session now."""
        with self.database.connection() as connection:
            lease = connection.execute(
                "SELECT owner FROM leases WHERE session_id = %s", (session_id,)
            ).fetchone()
            stored = connection.execute(
                "SELECT 1 FROM sessions WHERE id = %s", (session_id,)
            ).fetchone()
        if stored is None:
            return SessionNotFound(session_id)
        return NotOwner(session_id, lease[0] if lease else None)

    @staticmethod
    def _read(connection: psycopg.Connection[Any], session_ids: list[str]) -> list[TakenSession]:
        if not session_ids:
            return []
        rows = connection.execute(READ, (session_ids,)).fetchall()
        return [TakenSession(sid, spec, int(rev), float(made)) for sid, spec, rev, made in rows]

    def _values(self, **values: object) -> dict[str, object]:
        return {"me": self.replica_id, "ttl": self.ttl_s, **values}
