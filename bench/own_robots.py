"""Robots users bring: how long an upload and a live reload take.

Starts ``posekit up --robots DIR`` in a subprocess (data directory in a
temporary folder), then prints:

- **reload**: a session on a 3-joint MJCF arm with an OBJ mesh is watched on its
  websocket; the arm's file is rewritten ``--edits`` times (the forearm alternately
  0.30 and 0.33 m long), each after the previous reload settled. Per edit, from the
  write to the ``reload`` message, and to the first state solved on the new model
  (``revision`` at least the reload's). These include the watcher's debounce (changes
  are gathered until none came for 300 ms).
- **upload**: ``POST /api/robots`` of zipped robot folders (the test arm and, with
  ``MENAGERIE_ROOT``, Menagerie's UR5e and G1 folders, meshes and textures included):
  the zip's size and the time to the 201 (unpack, checks, compile in a child process
  with its time limit, compile again in the server for the description), then
  ``POST /api/sessions`` on it.

    python bench/own_robots.py [--edits 10]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import httpx
from websockets.sync.client import connect

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from support.robot_files import write_mjcf_arm  # noqa: E402


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def zip_folder(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()


def start(robots: Path, data: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = dict(os.environ, POSEKIT_DATA_DIR=str(data), POSEKIT_ROBOTS_DIR=str(robots))
    process = subprocess.Popen(
        [sys.executable, "-m", "posekit.cli", "up", "--port", str(port), "--robot", "none"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/api/health", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError("posekit up did not start")


def settled(client: httpx.Client, session_id: str) -> None:
    deadline = time.monotonic() + 60
    while not client.get(f"/api/sessions/{session_id}/state").json()["converged"]:
        if time.monotonic() > deadline:
            raise RuntimeError("the session did not settle")
        time.sleep(0.05)


def reloads(url: str, path: Path, edits: int) -> list[tuple[float, float]]:
    """(write → reload message, write → first state on the new model) per edit [ms]."""
    client = httpx.Client(base_url=url, timeout=60)
    sid = client.post("/api/sessions", json={"robot": path.stem}).json()["id"]
    settled(client, sid)
    times = []
    ws_url = url.replace("http", "ws", 1) + f"/api/sessions/{sid}/stream"
    with connect(ws_url, open_timeout=10) as ws:
        json.loads(ws.recv())  # hello
        for edit in range(edits):
            reach = 0.33 if edit % 2 == 0 else 0.3
            text = path.read_text()
            old = "0.3 0 0" if edit % 2 == 0 else "0.33 0 0"
            written = time.perf_counter()
            path.write_text(text.replace(old, f"{reach} 0 0"))
            revision, reloaded = None, 0.0
            while True:
                message = json.loads(ws.recv(timeout=30))
                if message["type"] == "reload":
                    reloaded = time.perf_counter()
                    revision = message["revision"]
                elif message["type"] == "state" and revision and message["revision"] >= revision:
                    times.append(
                        ((reloaded - written) * 1e3, (time.perf_counter() - written) * 1e3)
                    )
                    break
            settled(client, sid)
    client.delete(f"/api/sessions/{sid}")
    return times


def upload(url: str, name: str, archive: bytes) -> tuple[float, float]:
    """(upload → 201, session → 201) [ms]."""
    client = httpx.Client(base_url=url, timeout=120)
    began = time.perf_counter()
    response = client.post(
        "/api/robots", data={"name": name}, files={"file": (f"{name}.zip", archive)}
    )
    uploaded = time.perf_counter()
    if response.status_code != 201:
        raise RuntimeError(f"{name}: {response.status_code} {response.text[:300]}")
    created = client.post("/api/sessions", json={"robot": name})
    session = time.perf_counter()
    client.delete(f"/api/sessions/{created.json()['id']}")
    return (uploaded - began) * 1e3, (session - uploaded) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        arm = write_mjcf_arm(root / "robots", name="bench_arm")
        write_mjcf_arm(root / "upload_arm", name="upload_arm")
        process, url = start(root / "robots", root / "data")
        try:
            times = reloads(url, arm, args.edits)
            message = [t[0] for t in times]
            state = [t[1] for t in times]
            print(f"reload, {len(times)} edits of bench_arm (3 joints, 1 OBJ mesh):")
            for label, values in (("reload message", message), ("state on the new model", state)):
                print(
                    f"  write -> {label}: median {statistics.median(values):.0f} ms, "
                    f"min {min(values):.0f} ms, max {max(values):.0f} ms"
                )
            folders = {"test arm": root / "upload_arm"}
            menagerie = os.environ.get("MENAGERIE_ROOT")
            if menagerie:
                folders["Menagerie UR5e"] = Path(menagerie) / "universal_robots_ur5e"
                folders["Menagerie G1"] = Path(menagerie) / "unitree_g1"
            print("| robot | zip kB | upload -> 201 ms | session -> 201 ms |")
            print("| --- | ---: | ---: | ---: |")
            for index, (label, folder) in enumerate(folders.items()):
                archive = zip_folder(folder)
                up, session = upload(url, f"bench_upload_{index}", archive)
                print(f"| {label} | {len(archive) / 1e3:.0f} | {up:.0f} | {session:.0f} |")
        finally:
            process.terminate()
            process.wait(30)


if __name__ == "__main__":
    main()
