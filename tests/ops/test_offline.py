"""A server on a machine without a Menagerie checkout and without downloads answers a
Menagerie robot with a 503 ``robot_unavailable`` at once, and serves everything else."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
from support.servers import ServerProcess


def test_a_menagerie_robot_is_unavailable_at_once_when_downloads_are_off(tmp_path: Path) -> None:
    server = ServerProcess(
        robot="arm7",
        POSEKIT_MENAGERIE_DOWNLOAD="false",
        MENAGERIE_ROOT="",  # no checkout
        MENAGERIE_CACHE_DIR=str(tmp_path),  # an empty download cache
    )
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            robots = {r["name"]: r["source"] for r in client.get("/api/robots").json()}
            assert robots["universal_robots_ur5e"] == "menagerie"  # listed all the same
            started = time.monotonic()
            created = client.post("/api/sessions", json={"robot": "universal_robots_ur5e"})
            assert time.monotonic() - started < 5.0
            assert created.status_code == 503, created.text
            body = created.json()
            assert body["code"] == "robot_unavailable"
            assert "universal_robots_ur5e" in body["detail"]
            assert "downloads are off" in body["detail"]
            assert client.get("/api/robots/unitree_g1").status_code == 503
            assert list(tmp_path.iterdir()) == []  # nothing was downloaded or staged
            sessions = client.get("/api/sessions").json()
            assert [s["robot"] for s in sessions] == ["arm7"]  # the built-in arm serves
    finally:
        server.stop()
