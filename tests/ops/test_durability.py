"""Acknowledged changes survive kill -9, and deletes stay final, under concurrent bursts.

Each round creates two sessions; a burst of concurrent requests adds uniquely named
tasks to one (each 201 is an acknowledged change) while others PATCH the second and a
DELETE of the second races them. Then the server is killed
with SIGKILL and a new server opens the same database: every acknowledged task must be
there, and no deleted session may have come back. Against SQLite, and against PostgreSQL
(a cluster of one replica: the new server is another replica, which takes the killed
one's sessions over once their leases expire).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from support.servers import ServerProcess
from support.waiting import wait_for

ROUNDS = 10
ADDS_PER_ROUND = 24
PATCHES_PER_ROUND = 12


def _burst(url: str, keep: str, doomed: str) -> tuple[set[str], int]:
    """Concurrent adds to ``keep``, PATCHes to ``doomed`` and its DELETE; returns the
    names of the acknowledged tasks and the DELETE's status."""
    acknowledged: set[str] = set()
    lock = threading.Lock()
    local = threading.local()

    def client() -> httpx.Client:
        if not hasattr(local, "client"):
            local.client = httpx.Client(base_url=url, timeout=30)
        return local.client

    def add(index: int) -> None:
        name = f"damp{index}"
        body = {"name": name, "type": "damping", "params": {"cost": 1e-3 * (index + 1)}}
        if client().post(f"/api/sessions/{keep}/tasks", json=body).status_code == 201:
            with lock:
                acknowledged.add(name)

    def patch(index: int) -> None:
        client().patch(f"/api/sessions/{doomed}/tasks/posture", json={"cost": 0.01 + index})

    def delete() -> int:
        return client().delete(f"/api/sessions/{doomed}").status_code

    with ThreadPoolExecutor(max_workers=16) as pool:
        futures = [pool.submit(add, i) for i in range(ADDS_PER_ROUND)]
        futures += [pool.submit(patch, i) for i in range(PATCHES_PER_ROUND)]
        deleted = pool.submit(delete)
        futures += [pool.submit(patch, i) for i in range(PATCHES_PER_ROUND)]
        for future in futures:
            future.result()
    return acknowledged, deleted.result()


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """``POSEKIT_DB`` of the test: a SQLite file, or a PostgreSQL schema of its own."""
    if request.param == "sqlite":
        return str(tmp_path / "posekit.sqlite3")
    return str(request.getfixturevalue("postgres_url"))


def _tasks_of(client: httpx.Client, session_id: str) -> set[str]:
    """The session's task names, once a replica serves it (503 ``not_owner`` while the
    killed replica's lease has not expired yet)."""

    def served() -> httpx.Response | None:
        response = client.get(f"/api/sessions/{session_id}/tasks")
        return None if response.status_code == 503 else response

    response = wait_for(served, timeout=30, what=f"session {session_id} served", poll=0.2)
    assert response.status_code == 200, response.text
    return {t["name"] for t in response.json()}


def test_no_acknowledged_change_is_lost_and_no_deleted_session_returns(database: str) -> None:
    server = ServerProcess(POSEKIT_DB=database, POSEKIT_LEASE_TTL_S="1")
    expected: dict[str, set[str]] = {}
    deleted: set[str] = set()
    try:
        client = httpx.Client(base_url=server.url, timeout=30)
        for _ in range(ROUNDS):
            keep = client.post("/api/sessions", json={"robot": "arm7"}).json()["id"]
            doomed = client.post("/api/sessions", json={"robot": "arm7"}).json()["id"]
            acknowledged, status = _burst(server.url, keep, doomed)
            assert status == 204
            expected[keep] = acknowledged
            deleted.add(doomed)
    finally:
        server.stop(kill=True)
    restarted = ServerProcess(POSEKIT_DB=database, POSEKIT_LEASE_TTL_S="1")
    try:
        client = httpx.Client(base_url=restarted.url, timeout=30)
        listed = {s["id"] for s in client.get("/api/sessions").json()}
        assert listed == set(expected), f"deleted sessions back: {listed & deleted}"
        lost = {sid: names - _tasks_of(client, sid) for sid, names in expected.items()}
        assert sum(len(names) for names in expected.values()) >= ROUNDS * ADDS_PER_ROUND // 2
        assert not any(lost.values()), f"acknowledged tasks lost: {lost}"
    finally:
        restarted.stop()


def test_takes_survive_kill_9_and_deleted_ones_stay_deleted(database: str) -> None:
    """A take answered 200 on stop is there after SIGKILL and a restart, byte for byte;
    a take deleted before the kill is not."""
    server = ServerProcess(POSEKIT_DB=database, POSEKIT_LEASE_TTL_S="1")
    try:
        client = httpx.Client(base_url=server.url, timeout=30)
        sid = client.post("/api/sessions", json={"robot": "arm7"}).json()["id"]
        takes = []
        for name in ("kept", "deleted"):
            started = client.post(f"/api/sessions/{sid}/takes", json={"name": name})
            assert started.status_code == 201
            target = {"target": {"position": [0.4, 0.1, 0.5]}}
            assert client.patch(f"/api/sessions/{sid}/tasks/ee", json=target).status_code == 200
            stopped = client.post(f"/api/sessions/{sid}/takes/{started.json()['id']}/stop")
            takes.append(stopped.json()["id"])
        kept = client.get(f"/api/sessions/{sid}/takes/{takes[0]}").content
        assert client.delete(f"/api/sessions/{sid}/takes/{takes[1]}").status_code == 204
    finally:
        server.stop(kill=True)
    restarted = ServerProcess(POSEKIT_DB=database, POSEKIT_LEASE_TTL_S="1")
    try:
        client = httpx.Client(base_url=restarted.url, timeout=30)
        _tasks_of(client, sid)  # served by the new replica
        listed = [take["id"] for take in client.get(f"/api/sessions/{sid}/takes").json()]
        assert listed == [takes[0]]
        assert client.get(f"/api/sessions/{sid}/takes/{takes[0]}").content == kept
    finally:
        restarted.stop()
