"""The PostgreSQL server of the cluster tests: a fresh schema per test.

The server is ``POSEKIT_TEST_POSTGRES`` (a ``postgresql://`` URL), by default the
machine's ``postgresql://postgres@127.0.0.1:5432/test``. Without one answering, the tests
that need it skip with the reason, except under ``CI``, where they fail.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from psycopg import sql

DEFAULT_SERVER = "postgresql://postgres@127.0.0.1:5432/test"


def server_url() -> str:
    """The URL of the test server (without a schema)."""
    return os.environ.get("POSEKIT_TEST_POSTGRES", DEFAULT_SERVER)


def require_postgres() -> str:
    """The server's URL; skips the test (fails it under ``CI``) when it does not answer."""
    url = server_url()
    try:
        with psycopg.connect(url, connect_timeout=3) as connection:
            connection.execute("SELECT 1")
    except psycopg.Error as error:
        message = (
            f"no PostgreSQL answers at {url} ({str(error).strip()[:200]}); start one "
            "(`env` says how) or set POSEKIT_TEST_POSTGRES"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return url


def with_schema(url: str, schema: str) -> str:
    """``url`` whose connections use ``schema`` (``options=-csearch_path=…``)."""
    separator = "&" if "?" in url else "?"
    return f"{url}{separator}options=-csearch_path%3D{schema}"


@contextmanager
def fresh_schema(url: str) -> Iterator[str]:
    """A new schema ``posekit_test_<random>`` on the server at ``url``, dropped (with
    everything in it) afterwards; yields ``url`` with that schema as its search path."""
    schema = f"posekit_test_{secrets.token_hex(6)}"
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    try:
        yield with_schema(url, schema)
    finally:
        with psycopg.connect(url, autocommit=True) as connection:
            connection.execute(
                sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
            )
