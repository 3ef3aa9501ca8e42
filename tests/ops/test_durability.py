"""Acknowledged changes survive kill -9, and deletes stay final, under concurrent bursts.

Each round creates two sessions; a burst of concurrent requests adds uniquely named
tasks to one (each 201 is an acknowledged change) while others PATCH the second and a
DELETE of the second races them. Then the server and its solver process are killed
with SIGKILL and a new server opens the same database: every acknowledged task must be
there, and no deleted session may have come back.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from support.servers import ServerProcess

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


def test_no_acknowledged_change_is_lost_and_no_deleted_session_returns(tmp_path: Path) -> None:
    database = str(tmp_path / "posekit.sqlite3")
    server = ServerProcess(POSEKIT_DB=database)
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
    restarted = ServerProcess(POSEKIT_DB=database)
    try:
        client = httpx.Client(base_url=restarted.url, timeout=30)
        listed = {s["id"] for s in client.get("/api/sessions").json()}
        assert listed == set(expected), f"deleted sessions back: {listed & deleted}"
        lost = {
            sid: names - {t["name"] for t in client.get(f"/api/sessions/{sid}/tasks").json()}
            for sid, names in expected.items()
        }
        assert sum(len(names) for names in expected.values()) >= ROUNDS * ADDS_PER_ROUND // 2
        assert not any(lost.values()), f"acknowledged tasks lost: {lost}"
    finally:
        restarted.stop()
