"""Fixtures of the cluster tests: a fresh PostgreSQL schema, nginx, and three posekit
replicas behind it (:mod:`support.cluster`).

Outside CI, the tests skip with the reason when no PostgreSQL server answers at
``POSEKIT_TEST_POSTGRES`` (default ``postgresql://postgres@127.0.0.1:5432/test``) or
there is no nginx; under ``CI`` they fail instead.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from support.cluster import Cluster
from support.nginx import find_nginx

POSTGRES = os.environ.get("POSEKIT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A URL of the test database whose search path is a fresh schema, dropped after."""
    try:
        import psycopg
    except ImportError:
        _unavailable("psycopg is not installed (pip install -e '.[dev]')")
    try:
        admin = psycopg.connect(POSTGRES, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as error:
        _unavailable(f"no PostgreSQL server answers at {POSTGRES}: {error}".strip())
    schema = f"posekit_cluster_{secrets.token_hex(4)}"
    with admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
        try:
            separator = "&" if "?" in POSTGRES else "?"
            yield f"{POSTGRES}{separator}options={quote(f'-csearch_path={schema}')}"
        finally:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture
def nginx_binary() -> str:
    found = find_nginx()
    if found is None:
        _unavailable(
            "no nginx found (nginx on the PATH or in /usr/sbin, or POSEKIT_NGINX); "
            "`make test` installs Debian's nginx where apt exists"
        )
    assert found is not None
    return found


@pytest.fixture
def cluster(tmp_path: Path, postgres_url: str, nginx_binary: str) -> Iterator[Cluster]:
    """Three replicas on one fresh schema, 2 s leases, a token, behind nginx."""
    with Cluster(tmp_path, postgres_url, lease_ttl_s=2.0, token="cluster-s3cret") as started:
        yield started
