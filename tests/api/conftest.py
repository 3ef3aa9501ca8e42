"""Fixtures of the API tests: live servers, and a fresh arm session per test.

Every API test runs twice: against a server solving in a thread of its own process
(``Scheduler``) and against one solving in a solver process (``SolverProcesses``, the
default of ``posekit up``).
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from posekit.sessions import Scheduler, SessionManager
from posekit.sessions.loops.solver_processes import SolverProcesses
from support.models import offline_registry
from support.servers import LiveServer

SOLVE_LOOPS = {
    "thread": lambda registry: Scheduler(),
    "process": lambda registry: SolverProcesses(registry=registry),
}


@pytest.fixture(scope="session", params=sorted(SOLVE_LOOPS))
def server(request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    registry = offline_registry()  # the solver process gets the same recipe: no downloads
    manager = SessionManager(registry, solve_loop=SOLVE_LOOPS[request.param](registry))
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
