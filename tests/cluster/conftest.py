"""Fixtures of the cluster tests: nginx, and three posekit replicas behind it
(:mod:`support.cluster`) on a fresh PostgreSQL schema (``postgres_url``, shared by every
test directory).

Outside CI, the tests skip with the reason when no PostgreSQL server answers
(``POSEKIT_TEST_POSTGRES``) or there is no nginx; under ``CI`` they fail instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cluster import Cluster
from support.nginx import find_nginx


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


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
