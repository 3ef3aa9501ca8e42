"""Fixtures of the API tests: a live server, and a fresh arm session per test."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from posekit.sessions import SessionManager
from support.models import offline_registry
from support.servers import LiveServer


@pytest.fixture(scope="session")
def server() -> Iterator[LiveServer]:
    manager = SessionManager(offline_registry())
    live = LiveServer(manager).start()
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
