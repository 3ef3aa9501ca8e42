"""Pytest plugin: one live server for the API tests, and a fresh arm session per test.

Test modules load it with ``pytest_plugins = ["live_server_fixtures"]`` (a
``conftest.py`` below ``tests/`` would shadow the root one, which other tests import).
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from conftest import require_menagerie
from server_support import LiveServer


@pytest.fixture(scope="session")
def server() -> Iterator[LiveServer]:
    live = LiveServer().start()
    yield live
    live.stop()


@pytest.fixture
def client(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=30.0) as http:
        yield http


@pytest.fixture
def arm(client: httpx.Client) -> Iterator[str]:
    """A session on the built-in arm with its preset (tasks ee, posture); deleted after."""
    response = client.post("/api/sessions", json={"robot": "arm7"})
    assert response.status_code == 201, response.text
    session_id = response.json()["id"]
    yield session_id
    client.delete(f"/api/sessions/{session_id}")


@pytest.fixture
def _menagerie() -> None:
    require_menagerie()
