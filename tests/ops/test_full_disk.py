"""A full disk under the server's data: no write is acknowledged unless it is stored.

The server keeps its SQLite database and uploads on a small tmpfs of the test's own;
the test fills it and sends every kind of write. Each answer is 2xx (the change is
stored: SQLite may still have room inside its files) or 507/503 saying why (nothing
changed: the session reads as before); reads keep working; a websocket client whose
target cannot be stored is told so. Once space returns, writes
succeed again without a restart, and after a kill -9 and a restart every acknowledged
change is there and nothing refused is.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.robot_files import write_mjcf_arm, zip_folder
from support.servers import ServerProcess
from websockets.sync.client import connect

DISK = "4m"  # the tmpfs: room for the database, not for an upload once filled
REFUSED = {503, 507}


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "disk"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK}", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        message = f"mounting a tmpfs needs root: {mounted.stderr.strip()}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def _fill(folder: Path) -> Path:
    filler = folder / "filler"
    with filler.open("wb") as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError:
            pass
    return filler


def _cost(client: httpx.Client, session: str) -> float:
    response = client.get(f"/api/sessions/{session}/tasks/ee")
    assert response.status_code == 200, response.text
    return float(response.json()["params"]["position_cost"])


def _websocket_is_told(server: ServerProcess, session: str) -> bool:
    """Whether a target sent over the stream while the disk is full is answered, within
    the flush interval and a margin, with an ``error`` saying that it is not stored."""
    with connect(server.ws_url(session), open_timeout=10) as stream:
        stream.send(json.dumps({"type": "target", "task": "ee", "position": [0.3, 0.1, 0.5]}))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            message = json.loads(stream.recv(timeout=20))
            if message["type"] == "error":
                assert message["code"] in {"storage_full", "storage_unavailable"}, message
                return "not stored" in message["message"]
    return False


def test_a_full_disk_acknowledges_only_what_it_stored(small_disk: Path, tmp_path: Path) -> None:
    env = {"POSEKIT_DB": str(small_disk / "posekit.sqlite3"), "POSEKIT_DATA_DIR": str(small_disk)}
    server = ServerProcess(**env)
    client = httpx.Client(base_url=server.url, timeout=30)
    kept = client.post("/api/sessions", json={"robot": "arm7"}).json()["id"]
    assert client.patch(f"/api/sessions/{kept}/tasks/ee", json={"position_cost": 2.0}).is_success
    acknowledged_cost = 2.0
    doomed = client.post("/api/sessions", json={"robot": "arm7"}).json()["id"]
    robot = tmp_path / "robot"
    write_mjcf_arm(robot)
    upload = {"file": ("arm.zip", zip_folder(robot))}

    filler = _fill(small_disk)
    answers: list[int] = []
    created: list[str] = []
    for attempt in range(12):
        cost = 3.0 + attempt
        patched = client.patch(f"/api/sessions/{kept}/tasks/ee", json={"position_cost": cost})
        answers.append(patched.status_code)
        if patched.is_success:
            acknowledged_cost = cost
        else:
            assert patched.status_code in REFUSED, patched.text
            assert "store" in patched.json()["detail"]
        assert _cost(client, kept) == acknowledged_cost  # refused: as it was
        new = client.post("/api/sessions", json={"robot": "arm7"})
        answers.append(new.status_code)
        if new.is_success:
            created.append(new.json()["id"])
        else:
            assert new.status_code in REFUSED, new.text
    assert _websocket_is_told(server, kept)
    uploaded = client.post("/api/robots", files=upload)
    assert uploaded.status_code == 507, uploaded.text
    assert "disk is full" in uploaded.json()["detail"]
    deleted = client.delete(f"/api/sessions/{doomed}")
    answers.append(deleted.status_code)
    assert deleted.status_code in {204, *REFUSED}
    assert set(answers) <= {200, 201, 204, *REFUSED}
    assert REFUSED & set(answers), answers  # the full disk was felt
    assert client.get("/api/sessions").status_code == 200  # reads go on

    filler.unlink()  # space returns: writes succeed again, without a restart
    assert client.patch(f"/api/sessions/{kept}/tasks/ee", json={"position_cost": 42.0}).is_success
    assert client.post("/api/robots", files=upload).status_code == 201

    server.stop(kill=True)
    server = ServerProcess(**env)
    try:
        client = httpx.Client(base_url=server.url, timeout=30)
        assert _cost(client, kept) == 42.0
        stored = {session["id"] for session in client.get("/api/sessions").json()}
        assert set(created) <= stored
        assert (doomed in stored) == (deleted.status_code != 204)
        assert stored <= {kept, doomed, *created}  # nothing refused came back
    finally:
        server.stop()
