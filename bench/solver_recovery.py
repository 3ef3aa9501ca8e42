"""How long a session goes without states when its solver process is killed (kill -9).

Starts ``posekit up`` with one arm7 session and a websocket client, then, every
``--interval`` seconds, kills the solver process with SIGKILL and measures the time from
the kill to the first state that answers a target sent after it (the client keeps
sending a target every 50 ms until one is answered). Printed: one line per kill.

    python bench/solver_recovery.py [--kills 5] [--interval 12]

With kills more than 10 s apart every replacement is the warm spare; closer together,
a process that keeps dying is replaced with a growing delay (1, 2, 4 … 30 s).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

import httpx
from websockets.sync.client import ClientConnection, connect

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from server_load import free_port, process_tree, start_server  # noqa: E402


def solver_pids(server_pid: int) -> set[int]:
    """The server's solver processes (its children but the resource tracker)."""
    pids = set()
    for pid in process_tree(server_pid)[1:]:
        if b"resource_tracker" not in Path(f"/proc/{pid}/cmdline").read_bytes():
            pids.add(pid)
    return pids


def serving_pid(http: httpx.Client, sid: str, server_pid: int) -> int:
    """The solver process that steps the session: the one whose CPU time grows while the
    session is kept busy (the other one is the idle spare)."""
    candidates = solver_pids(server_pid)
    before = {pid: cpu_ticks(pid) for pid in candidates}
    for i in range(20):
        http.patch(f"/api/sessions/{sid}/tasks/ee", json={"gain": 0.5 + 0.01 * (i % 2)})
        time.sleep(0.02)
    return max(candidates, key=lambda pid: cpu_ticks(pid) - before[pid])


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def recovery(ws: ClientConnection, victim: int, label: str) -> float:
    """Kill ``victim``; seconds until a state answers a target sent after the kill."""
    os.kill(victim, signal.SIGKILL)
    killed = time.monotonic()
    attempt = 0
    while True:
        attempt += 1
        ref = f"{label}-{attempt}"
        position = [0.4, 0.05 * (attempt % 3), 0.3]
        ws.send(json.dumps({"type": "target", "task": "ee", "position": position, "ref": ref}))
        deadline = time.monotonic() + 0.05
        while time.monotonic() < deadline:
            try:
                message = json.loads(ws.recv(timeout=0.05))
            except TimeoutError:
                break
            if message.get("type") == "state" and str(message.get("ref", "")).startswith(label):
                return time.monotonic() - killed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--interval", type=float, default=12.0)
    args = parser.parse_args()
    port = free_port()
    server = start_server(port, {})
    base = f"http://127.0.0.1:{port}"
    try:
        http = httpx.Client(base_url=base, timeout=60)
        sid = http.post("/api/sessions", json={"robot": "arm7"}).json()["id"]
        with connect(f"ws://127.0.0.1:{port}/api/sessions/{sid}/stream") as ws:
            ws.recv()  # hello
            for kill in range(1, args.kills + 1):
                time.sleep(args.interval)
                victim = serving_pid(http, sid, server.pid)
                seconds = recovery(ws, victim, f"kill{kill}")
                print(f"kill {kill}: states again after {seconds * 1e3:.0f} ms", flush=True)
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
