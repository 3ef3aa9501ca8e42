"""Load on the live backend: N sessions, each with a websocket client dragging a target.

Starts ``posekit up`` in a subprocess on a free loopback port, then for each N (10, 50,
100 by default) creates N sessions on the built-in arm (default preset: ``ee`` frame
task + posture, 60 Hz solve and stream). One websocket client per session sends an
``ee`` target on a circle at 20 Hz, each with an increasing ``ref``, and reads the
stream. Printed per N:

- states/s per session (mean and the slowest session),
- target-to-state latency p50/p95/p99 [ms]: from sending a target to receiving the
  first state computed after it (the first state whose ``ref`` is at least the target's),
- CPU [% of one core] over the measured window (from /proc): the whole server (the API
  process and its solver processes), the API process alone, and the clients.

    python bench/server_load.py [--sessions 10,50,100] [--seconds 10] [--warmup 2]
                                [--solver-processes N]

The clients run in this process (on uvloop when installed), the server in another;
on a 2-core machine they share the cores, so the figures include that contention.
Each client reads and decodes every message it receives.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import connect

REPO = Path(__file__).resolve().parents[1]
TARGET_HZ = 20.0


@dataclass
class SessionLoad:
    """What one client measured on its session."""

    session_id: str
    center: list[float]
    sent: dict[int, float] = field(default_factory=dict)
    next_ref: int = 0  # first ref whose latency is not measured yet
    states: int = 0
    latencies: list[float] = field(default_factory=list)
    measuring: bool = False


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU time of a process [s] (Linux /proc); NaN when unknown."""
    if pid is None:
        return math.nan
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_tree(pid: int | None) -> list[int]:
    """``pid`` and its descendants (the server's solver processes)."""
    if pid is None:
        return []
    tree, index = [pid], 0
    while index < len(tree):
        for children in Path(f"/proc/{tree[index]}/task").glob("*/children"):
            tree.extend(int(child) for child in children.read_text().split())
        index += 1
    return tree


def tree_cpu_seconds(pids: list[int]) -> float:
    """CPU time of the processes that are still alive [s]; NaN when there are none."""
    total = 0.0
    for pid in pids:
        try:
            total += cpu_seconds(pid)
        except FileNotFoundError:
            pass
    return total if pids else math.nan


def start_server(port: int, solver_processes: int | None) -> subprocess.Popen:
    command = [sys.executable, "-m", "posekit.cli", "up", "--port", str(port), "--robot", "none"]
    env = dict(os.environ)
    if solver_processes is not None:
        env["POSEKIT_SOLVER_PROCESSES"] = str(solver_processes)
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("the server did not start")


async def drive(url: str, load: SessionLoad, stop: asyncio.Event, phase: float) -> None:
    """Send targets at 20 Hz and read states until ``stop``."""
    async with connect(url, max_size=1 << 22) as ws:
        json.loads(await ws.recv())  # hello

        async def send() -> None:
            period = 1.0 / TARGET_HZ
            tick = time.monotonic() + phase * period
            while not stop.is_set():
                await asyncio.sleep(max(0.0, tick - time.monotonic()))
                tick += period
                ref = len(load.sent)
                angle = 2 * math.pi * 0.25 * time.monotonic() + phase * 6.28
                x, y, z = load.center
                position = [x + 0.05 * math.cos(angle), y + 0.05 * math.sin(angle), z]
                load.sent[ref] = time.perf_counter()
                await ws.send(
                    json.dumps({"type": "target", "task": "ee", "position": position, "ref": ref})
                )

        async def receive() -> None:
            async for raw in ws:  # every message is read and decoded, as a viewer would
                now = time.perf_counter()
                message = json.loads(raw)
                if message["type"] != "state":
                    continue
                if load.measuring:
                    load.states += 1
                ref = message["ref"]
                if ref is None:
                    continue
                while load.next_ref <= ref:
                    if load.measuring and load.next_ref in load.sent:
                        load.latencies.append(now - load.sent[load.next_ref])
                    load.next_ref += 1

        tasks = [asyncio.create_task(send()), asyncio.create_task(receive())]
        try:
            await stop.wait()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


def run(coroutine: Any) -> Any:
    """Run the clients on uvloop when it is installed (as uvicorn runs the server)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    return uvloop.run(coroutine)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[index]


async def run_level(base: str, pid: int, count: int, seconds: float, warmup: float) -> dict:
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        loads = []
        for _ in range(count):
            session = (await http.post("/api/sessions", json={"robot": "arm7"})).json()
            task = (await http.get(f"/api/sessions/{session['id']}/tasks/ee")).json()
            loads.append(SessionLoad(session["id"], task["target"]["position"]))
        stop = asyncio.Event()
        ws_base = base.replace("http", "ws", 1)
        clients = [
            asyncio.create_task(
                drive(f"{ws_base}/api/sessions/{load.session_id}/stream", load, stop, i / count)
            )
            for i, load in enumerate(loads)
        ]
        await asyncio.sleep(warmup)
        for load in loads:
            load.measuring = True
        tree = process_tree(pid)
        server_cpu, api_cpu = tree_cpu_seconds(tree), tree_cpu_seconds(tree[:1])
        client_cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.sleep(seconds)
        for load in loads:
            load.measuring = False
        wall = time.perf_counter() - wall
        server_cpu = tree_cpu_seconds(tree) - server_cpu
        api_cpu = tree_cpu_seconds(tree[:1]) - api_cpu
        client_cpu = time.process_time() - client_cpu
        stop.set()
        await asyncio.gather(*clients, return_exceptions=True)
        for load in loads:
            await http.delete(f"/api/sessions/{load.session_id}")
    latencies = [x * 1e3 for load in loads for x in load.latencies]
    rates = [load.states / wall for load in loads]
    return {
        "sessions": count,
        "rate_mean": statistics.fmean(rates),
        "rate_min": min(rates),
        "p50": percentile(latencies, 50),
        "p95": percentile(latencies, 95),
        "p99": percentile(latencies, 99),
        "samples": len(latencies),
        "server_cpu": 100 * server_cpu / wall,
        "api_cpu": 100 * api_cpu / wall,
        "client_cpu": 100 * client_cpu / wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", default="10,50,100")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument(
        "--url", help="use a running server (e.g. http://127.0.0.1:8000) instead of starting one"
    )
    parser.add_argument("--pid", type=int, help="with --url: the server's pid, for its CPU use")
    parser.add_argument(
        "--solver-processes",
        type=int,
        help="POSEKIT_SOLVER_PROCESSES of the started server (default: the server's own)",
    )
    args = parser.parse_args()
    server = None
    if args.url:
        base, pid = args.url.rstrip("/"), args.pid
    else:
        port = free_port()
        server = start_server(port, args.solver_processes)
        base, pid = f"http://127.0.0.1:{port}", server.pid
    rows = []
    try:
        for count in (int(n) for n in args.sessions.split(",")):
            rows.append(run(run_level(base, pid, count, args.seconds, args.warmup)))
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
    print(
        f"posekit server load: arm7 sessions at 60 Hz, targets at {TARGET_HZ:.0f} Hz per "
        f"session, {args.seconds:.0f} s per row, {os.cpu_count()} CPUs, solver processes: "
        f"{'server default' if args.solver_processes is None else args.solver_processes}"
    )
    header = (
        f"{'sessions':>8} | {'states/s/session':>16} | {'slowest':>7} | {'p50 ms':>6} | "
        f"{'p95 ms':>6} | {'p99 ms':>6} | {'targets':>7} | {'server CPU':>10} | "
        f"{'API CPU':>7} | {'client CPU':>10}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        print(
            f"{r['sessions']:>8} | {r['rate_mean']:>16.1f} | {r['rate_min']:>7.1f} | "
            f"{r['p50']:>6.1f} | {r['p95']:>6.1f} | {r['p99']:>6.1f} | {r['samples']:>7} | "
            f"{r['server_cpu']:>9.0f}% | {r['api_cpu']:>6.0f}% | {r['client_cpu']:>9.0f}%"
        )


if __name__ == "__main__":
    main()
