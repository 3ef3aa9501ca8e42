"""Robots users bring, across restarts and from the command line: uploaded robots and
the sessions on them come back; ``posekit up FILE --robots DIR`` serves both."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from support.own_server import settled
from support.robot_files import write_mjcf_arm, write_urdf_package, zip_folder
from support.servers import ServerProcess


def test_an_uploaded_robot_and_its_session_survive_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "state" / "posekit.sqlite3"
    db.parent.mkdir()
    package = tmp_path / "package"
    write_urdf_package(package)
    server = ServerProcess(POSEKIT_DB=str(db))  # uploads kept next to the database
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            uploaded = client.post(
                "/api/robots", files={"file": ("bench_arm.zip", zip_folder(package))}
            )
            assert uploaded.status_code == 201, uploaded.text
            sid = client.post("/api/sessions", json={"robot": "bench_arm"}).json()["id"]
            target = {"target": {"position": [0.05, 0.1, 0.5]}, "orientation_cost": 0.0}
            assert client.patch(f"/api/sessions/{sid}/tasks/tool0", json=target).status_code == 200
            before = settled(client, sid, 1)
            tasks_before = client.get(f"/api/sessions/{sid}/tasks").json()
    finally:
        server.stop()
    assert (db.parent / "robots" / "bench_arm.json").is_file()
    server = ServerProcess(POSEKIT_DB=str(db))
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            robots = client.get("/api/robots", params={"source": "uploaded"}).json()
            assert [r["name"] for r in robots] == ["bench_arm"]
            summary = client.get(f"/api/sessions/{sid}").json()
            assert summary["robot"] == "bench_arm" and summary["status"] != "unavailable", summary
            assert client.get(f"/api/sessions/{sid}/tasks").json() == tasks_before
            after = settled(client, sid)
            assert after["q"] == pytest.approx(before["q"], abs=1e-6)
    finally:
        server.stop()


def test_posekit_up_serves_a_file_with_the_first_session_and_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "robots"
    folder.mkdir()
    write_urdf_package(folder)
    arm = write_mjcf_arm(tmp_path / "bench", name="bench_arm")
    server = ServerProcess("arm7", args=(str(arm), "--robots", str(folder)))
    try:
        local = httpx.get(f"{server.url}/api/robots", params={"source": "local"}).json()
        assert sorted(r["name"] for r in local) == ["bench_arm", "two_link"]
        sessions = httpx.get(f"{server.url}/api/sessions").json()
        assert [s["robot"] for s in sessions] == ["bench_arm"]
    finally:
        server.stop()
