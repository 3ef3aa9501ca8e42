"""The PostgreSQL database of a cluster: a connection pool, and the schema, created or
migrated when the app starts.

Schema (version 1), in the first schema of the connection's ``search_path`` (``public``
by default; ``options=-csearch_path=NAME`` in the URL, or ``POSEKIT_DB_SCHEMA=NAME``,
which is created when missing):

- ``sessions (id, spec json, revision, created_at, saved_at)``: one row per stored
  session; ``spec`` keeps the JSON text as written (floats round-trip exactly);
- ``deleted_sessions (id, deleted_at)``: tombstones (a delete is final);
- ``leases (session_id, owner, epoch, expires_at)``: who solves each session, until
  when (the database's clock), and the fencing epoch;
- ``posekit_schema (version, applied_at)``: the migrations applied.

:meth:`PostgresDatabase.migrate` runs every migration newer than the recorded version,
in one transaction under an advisory lock, so replicas starting together migrate once;
it refuses a database whose schema is newer than this posekit knows. Connections are
in autocommit: every statement is its own transaction unless it says otherwise.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool

from posekit.sessions.errors import DatabaseUnavailable

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 5
PING_TIMEOUT_S = 2.0

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE IF NOT EXISTS sessions (
            id text PRIMARY KEY,
            spec json NOT NULL,
            revision bigint NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            saved_at timestamptz NOT NULL DEFAULT now()
        )""",
        """CREATE TABLE IF NOT EXISTS deleted_sessions (
            id text PRIMARY KEY,
            deleted_at timestamptz NOT NULL DEFAULT now()
        )""",
        """CREATE TABLE IF NOT EXISTS leases (
            session_id text PRIMARY KEY,
            owner text,
            epoch bigint NOT NULL,
            expires_at timestamptz NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS leases_expiry ON leases (expires_at) WHERE owner IS NOT NULL",
    ),
    (
        """CREATE TABLE IF NOT EXISTS takes (
            session_id text NOT NULL,
            id text NOT NULL,
            take json NOT NULL,
            saved_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (session_id, id)
        )""",
    ),
)
"""Migration ``k`` (1-based) brings the schema from version ``k - 1`` to ``k``."""


class PostgresDatabase:
    """Pooled connections to the database at ``url`` (schema ``schema`` when given)."""

    def __init__(self, url: str, schema: str | None = None, *, max_connections: int = 8) -> None:
        self.schema = schema
        kwargs: dict[str, object] = {"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S}
        if schema:
            kwargs["options"] = f"-c search_path={schema}"
        self.pool: ConnectionPool = ConnectionPool(
            url,
            kwargs=kwargs,
            min_size=1,
            max_size=max_connections,
            timeout=CONNECT_TIMEOUT_S,
            check=ConnectionPool.check_connection,
            open=True,
            name="posekit",
        )

    @contextmanager
    def connection(self, timeout: float | None = None) -> Iterator[psycopg.Connection]:
        """A connection of the pool; an unreachable database raises
        :class:`DatabaseUnavailable`."""
        try:
            with self.pool.connection(timeout=timeout) as connection:
                yield connection
        except psycopg.OperationalError as error:
            raise DatabaseUnavailable(f"the database cannot be reached ({error})") from error

    def ping(self) -> bool:
        """Whether the database answers a query within ``PING_TIMEOUT_S``."""
        try:
            with self.connection(PING_TIMEOUT_S) as connection:
                connection.execute("SELECT 1").fetchone()
        except (DatabaseUnavailable, psycopg.Error):
            return False
        return True

    def migrate(self) -> int:
        """Create or migrate the schema (module docstring); returns its version."""
        with self.connection() as connection, connection.transaction():
            path = connection.execute("SHOW search_path").fetchone()
            key = self.schema or (str(path[0]) if path else "")
            connection.execute(
                "SELECT pg_advisory_xact_lock(hashtext('posekit-schema:' || %s))", (key,)
            )
            if self.schema:
                connection.execute(
                    sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema))
                )
            connection.execute(
                """CREATE TABLE IF NOT EXISTS posekit_schema (
                    version integer PRIMARY KEY,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )"""
            )
            row = connection.execute(
                "SELECT coalesce(max(version), 0) FROM posekit_schema"
            ).fetchone()
            current = int(row[0]) if row else 0
            if current > len(MIGRATIONS):
                raise RuntimeError(
                    f"the database's posekit schema is version {current}; this posekit knows "
                    f"versions up to {len(MIGRATIONS)} (upgrade posekit)"
                )
            for version, statements in enumerate(MIGRATIONS, start=1):
                if version > current:
                    for statement in statements:
                        connection.execute(statement)
                    connection.execute(
                        "INSERT INTO posekit_schema (version) VALUES (%s)", (version,)
                    )
                    logger.info("database schema migrated to version %d", version)
        return len(MIGRATIONS)

    def close(self) -> None:
        """Close every connection."""
        self.pool.close()
