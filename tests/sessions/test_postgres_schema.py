"""The PostgreSQL schema: created at start, migrated once, idempotent; in the schema the
URL or ``POSEKIT_DB_SCHEMA`` names; a newer schema than this posekit knows is refused."""

from __future__ import annotations

import secrets

import psycopg
import pytest
from posekit.sessions.store.postgres_database import MIGRATIONS, PostgresDatabase
from psycopg import sql
from support.postgres import server_url


def _tables(url: str, schema: str | None = None) -> set[str]:
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = "
            "coalesce(%s, current_schema())",
            (schema,),
        ).fetchall()
    return {row[0] for row in rows}


def test_the_schema_is_created_once_and_migrating_again_changes_nothing(
    postgres_url: str,
) -> None:
    database = PostgresDatabase(postgres_url)
    try:
        assert database.migrate() == len(MIGRATIONS)
        assert database.migrate() == len(MIGRATIONS)
        with database.connection() as connection:
            versions = connection.execute("SELECT version FROM posekit_schema").fetchall()
        assert [v for (v,) in versions] == list(range(1, len(MIGRATIONS) + 1))
        assert {"sessions", "deleted_sessions", "leases", "posekit_schema"} <= _tables(postgres_url)
        assert database.ping()
    finally:
        database.close()


def test_a_newer_schema_is_refused(postgres_url: str) -> None:
    database = PostgresDatabase(postgres_url)
    try:
        database.migrate()
        with database.connection() as connection:
            connection.execute("INSERT INTO posekit_schema (version) VALUES (999)")
        with pytest.raises(RuntimeError, match="version 999"):
            database.migrate()
    finally:
        database.close()


def test_the_schema_setting_creates_its_schema(postgres_url: str) -> None:
    """``POSEKIT_DB_SCHEMA`` (``schema=``): the tables go there, created when missing."""
    schema = f"posekit_test_{secrets.token_hex(6)}"
    database = PostgresDatabase(server_url(), schema=schema)
    try:
        database.migrate()
        assert {"sessions", "leases"} <= _tables(server_url(), schema)
    finally:
        database.close()
        with psycopg.connect(server_url(), autocommit=True) as connection:
            connection.execute(
                sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
            )


def test_an_unreachable_database_is_reported_not_raised() -> None:
    database = PostgresDatabase("postgresql://postgres@127.0.0.1:1/none")
    try:
        assert not database.ping()
    finally:
        database.close()
