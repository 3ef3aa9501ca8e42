"""Load on the live backend: N sessions, each with a websocket client dragging a target.

Starts ``posekit up`` in a subprocess on a free loopback port, then for each N (10, 50,
100 by default) creates N sessions on the built-in arm (default preset: ``ee`` frame
task + posture, 60 Hz solve and stream). One websocket client per session sends an
``ee`` target on a circle at 20 Hz, each with an increasing ``ref``, and reads the
stream. Printed per N:

- states/s per session (mean and the slowest session),
- target-to-state latency p50/p95/p99 [ms]: from sending a target to receiving the
  first state computed after it (the first state whose ``ref`` is at least the target's),
- CPU [% of one core] over the measured window (from /proc): the whole server (its
  process and any children), the server process alone, and the clients;
- the states delivered per second in all, and the CPU each cost [µs]: in the solver
  processes (step, encoding, transfer) and in the API process (receiving, forwarding
  to the watcher, and its share of the targets it received),
- changes per state: the sessions' revisions counted in the states received (each target
  applied is one) per state received — past saturation a change that no state answers
  is work wasted;
- REST p95 [ms]: ``GET /api/sessions/{id}`` of the sessions in turn every 50 ms during
  the measured window.

``--pythonpath DIRS``: the started server is imported from there (for a run side by side
with another checkout: ``--pythonpath ../other/server:../other/frontend``).

    python bench/server_load.py [--sessions 10,50,100] [--seconds 10] [--warmup 2]
                                [--pythonpath DIRS] [--scenario levels|heavy]
                                [--format json|binary] [--target-hz 20] [--polite]
                                [--kind light|heavy] [--clients websockets|lean]

``--format binary``: the clients ask for binary state frames (``?format=binary``) and
decode them. ``--clients lean``: the same clients' targets and reading through
:mod:`lean_client` (bare frames, binary states decoded from their header, one ticker for
all targets) instead of websockets' client (:mod:`websockets_client`): the server gets the
same messages, the clients take about half the CPU they take from the server's machine.
``--target-hz 0``: watch only — no targets; each session's target is moved
once and its tolerance set out of reach, so it keeps stepping at 60 Hz, and the API
process's CPU per state is what forwarding a state to its watcher costs. ``--polite``:
a client sends a target only when the state answering its previous one has come (a tick
that finds it unanswered sends nothing), as the stream's docs recommend; by default the
clients are eager: a target every tick whatever they received.

Scenario ``heavy`` (fair share): ``--light`` arm7 sessions as above beside ``--heavy``
(3) sessions on Menagerie's ``unitree_g1`` (``MENAGERIE_ROOT``) whose collision-avoidance
limit checks every body against every body within 0.3 m (967 geom pairs, about 4 ms per
step); their clients drag ``left_palm`` the same way. Printed per group: the light
sessions must keep their rate and latency, the heavy ones are throttled. ``--kind heavy``
runs the levels on such G1 sessions alone: stepping, not the server process, is then what
saturates, and past it the total should hold and be shared evenly.

The clients run in this process (on uvloop when installed), the server in another;
on a 2-core machine they share the cores, so the figures include that contention.
Each client reads and decodes every message it receives.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import lean_client
import websockets_client
from session_load import LIGHT, TARGET_HZ, ClientMode, Kind, SessionLoad

REPO = Path(__file__).resolve().parents[1]
KEEP_STEPPING = 1e-300  # [rad|m] the tolerance of watch-only sessions: they never park


HEAVY_DETECTION_M = 0.3
REST_PROBE_S = 0.05  # [s] between two REST reads of the measured window


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
    """``pid`` and its descendants."""
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


def start_server(port: int, environment: dict[str, str]) -> subprocess.Popen:
    command = [sys.executable, "-m", "posekit.cli", "up", "--port", str(port), "--robot", "none"]
    env = dict(os.environ, **environment)
    if "PYTHONPATH" in environment and os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = f"{environment['PYTHONPATH']}:{os.environ['PYTHONPATH']}"
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                wait_until_idle(process.pid)
                return process
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("the server did not start")


def wait_until_idle(pid: int, most: float = 0.05, limit_s: float = 60.0) -> None:
    """Wait until the server's processes use under ``most`` of a core in two seconds running:
    its solver process and the spare one start after the health check answers, and the
    spare's warm-up (about a core for seconds on a slow machine) would fall into the
    first level's measurement."""
    deadline, quiet = time.monotonic() + limit_s, 0
    while time.monotonic() < deadline and quiet < 2:
        before = tree_cpu_seconds(process_tree(pid))
        time.sleep(1.0)
        quiet = quiet + 1 if tree_cpu_seconds(process_tree(pid)) - before < most else 0


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


async def heavy_kind(http: httpx.AsyncClient) -> Kind:
    """G1 sessions checking every body against every body for collisions."""
    robot = (await http.get("/api/robots/unitree_g1")).json()
    if "frames" not in robot:
        raise SystemExit(f"scenario heavy needs Menagerie's unitree_g1: {robot}")
    bodies = [b for b in robot["frames"]["body"] if b != "world"]
    limit = {
        "type": "collision_avoidance",
        "params": {
            "geom_pairs": [[bodies, bodies]],
            "collision_detection_distance": HEAVY_DETECTION_M,
        },
    }
    return Kind("heavy (G1, collisions)", "unitree_g1", "left_palm", (limit,))


async def create_sessions(
    http: httpx.AsyncClient, kind: Kind, count: int, watch_only: bool = False
) -> list[SessionLoad]:
    """``count`` sessions of ``kind``; ``watch_only``: sessions that keep stepping without
    targets (their target moved 10 cm once, a tolerance they never reach)."""
    loads = []
    for _ in range(count):
        answer = await http.post("/api/sessions", json={"robot": kind.robot})
        if answer.status_code != 201:
            raise RuntimeError(f"session {len(loads) + 1} of {count} refused: {answer.text}")
        sid = answer.json()["id"]
        for limit in kind.limits:
            answer = await http.post(f"/api/sessions/{sid}/limits", json=limit)
            answer.raise_for_status()
        task = (await http.get(f"/api/sessions/{sid}/tasks/{kind.task}")).json()
        loads.append(SessionLoad(sid, task["target"]["position"], kind))
        if watch_only:
            x, y, z = task["target"]["position"]
            moved = {"target": {"position": [x, y + 0.1, z]}}
            (
                await http.patch(f"/api/sessions/{sid}/tasks/{kind.task}", json=moved)
            ).raise_for_status()
            tolerance = {"tolerance": KEEP_STEPPING}
            (await http.patch(f"/api/sessions/{sid}/solver", json=tolerance)).raise_for_status()
    return loads


async def every_client_streaming(loads: list[SessionLoad], timeout_s: float = 120.0) -> None:
    """Wait until every client has had a state: the warm-up starts from there. Connecting
    hundreds of clients to a saturated server takes seconds, and a warm-up started with
    the first of them let the measurement begin before the last were served (those
    sessions then counted fewer states, as if stepped less often)."""
    deadline = time.monotonic() + timeout_s
    while not all(load.streaming for load in loads):
        if time.monotonic() > deadline:
            waiting = sum(not load.streaming for load in loads)
            raise RuntimeError(f"{waiting} clients had no state after {timeout_s:.0f} s")
        await asyncio.sleep(0.05)


async def run_level(
    base: str,
    pid: int,
    groups: list[tuple[Kind, int]],
    seconds: float,
    warmup: float,
    mode: ClientMode,
) -> list[dict]:
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        loads = []
        for kind, count in groups:
            loads += await create_sessions(http, kind, count, watch_only=mode.target_hz <= 0.0)
        stop = asyncio.Event()
        ws_base = base.replace("http", "ws", 1)
        urls = [f"{ws_base}/api/sessions/{load.session_id}/stream" for load in loads]
        if mode.clients == "lean":
            lean = [f"{url}?format=binary" for url in urls]
            clients = [asyncio.create_task(lean_client.drive_all(lean, loads, stop, mode))]
        else:
            clients = [
                asyncio.create_task(websockets_client.drive(url, load, stop, i / len(loads), mode))
                for i, (url, load) in enumerate(zip(urls, loads, strict=True))
            ]
        await every_client_streaming(loads)
        await asyncio.sleep(warmup)
        for load in loads:
            load.measuring = True
        tree = process_tree(pid)
        server_cpu, api_cpu = tree_cpu_seconds(tree), tree_cpu_seconds(tree[:1])
        client_cpu, wall = time.process_time(), time.perf_counter()
        rest_ms: list[float] = []
        prober = asyncio.create_task(probe_rest(http, loads, rest_ms))
        await asyncio.sleep(seconds)
        prober.cancel()
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
    delivered = sum(load.states for load in loads)  # states received, every group
    applied = sum(x.last_revision - (x.first_revision or x.last_revision) for x in loads)
    cpu = {
        "server_cpu": 100 * server_cpu / wall,
        "api_cpu": 100 * api_cpu / wall,
        "client_cpu": 100 * client_cpu / wall,
        "total_rate": delivered / wall,
        "solver_us": 1e6 * (server_cpu - api_cpu) / max(1, delivered),
        "api_us": 1e6 * api_cpu / max(1, delivered),
        "applied": applied / max(1, delivered),
        "rest_p95": percentile(rest_ms, 95),
    }
    return [summary([x for x in loads if x.kind == kind], wall, cpu) for kind, _ in groups]


async def probe_rest(http: httpx.AsyncClient, loads: list[SessionLoad], out: list[float]) -> None:
    """Read the sessions in turn over REST every ``REST_PROBE_S``; each answer's time [ms]
    goes to ``out``."""
    turn = 0
    while True:
        start = time.perf_counter()
        answer = await http.get(f"/api/sessions/{loads[turn % len(loads)].session_id}")
        out.append((time.perf_counter() - start) * 1e3)
        answer.raise_for_status()
        turn += 1
        await asyncio.sleep(REST_PROBE_S)


def summary(loads: list[SessionLoad], wall: float, cpu: dict[str, float]) -> dict:
    """Figures of one group of sessions."""
    latencies = [x * 1e3 for load in loads for x in load.latencies]
    rates = [load.states / wall for load in loads]
    return {
        "sessions": f"{len(loads)} {loads[0].kind.group}" if loads else "0",
        "rate_mean": statistics.fmean(rates) if rates else math.nan,
        "rate_min": min(rates, default=math.nan),
        "p50": percentile(latencies, 50),
        "p95": percentile(latencies, 95),
        "p99": percentile(latencies, 99),
        "samples": len(latencies),
        "throttled": 100 * sum(x.throttled for x in loads) / max(1, sum(x.states for x in loads)),
        **cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", default="10,50,100", help="levels of sessions")
    parser.add_argument(
        "--kind",
        choices=["light", "heavy"],
        default="light",
        help="scenario levels: arm7 sessions (light) or G1 sessions checking collisions (heavy)",
    )
    parser.add_argument("--scenario", choices=["levels", "heavy"], default="levels")
    parser.add_argument("--light", type=int, default=20, help="scenario heavy: arm7 sessions")
    parser.add_argument("--heavy", type=int, default=3, help="scenario heavy: G1 sessions")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument(
        "--url", help="use a running server (e.g. http://127.0.0.1:8000) instead of starting one"
    )
    parser.add_argument("--pid", type=int, help="with --url: the server's pid, for its CPU use")
    parser.add_argument(
        "--pythonpath",
        help="import the started server from here (e.g. another checkout's server:frontend)",
    )
    parser.add_argument(
        "--format",
        choices=["json", "binary"],
        default="json",
        help="how the clients ask for states: JSON messages or binary frames",
    )
    parser.add_argument(
        "--target-hz",
        type=float,
        default=TARGET_HZ,
        help="targets per second per client; 0: watch only (the server forwards states)",
    )
    parser.add_argument(
        "--polite",
        action="store_true",
        help="clients send a target only once their previous one is answered",
    )
    parser.add_argument(
        "--clients",
        choices=["websockets", "lean"],
        default="websockets",
        help="websockets' client, or bench/lean_client.py's (binary states; less client CPU)",
    )
    parser.add_argument(
        "--capacity",
        type=float,
        help="POSEKIT_SOLVE_CAPACITY of the started server (0: never throttle)",
    )
    args = parser.parse_args()
    mode = client_mode(args)
    server = None
    if args.url:
        base, pid = args.url.rstrip("/"), args.pid
    else:
        port = free_port()
        most = max(int(n) for n in args.sessions.split(",")) if args.scenario == "levels" else 0
        live = most + args.light + args.heavy
        environment = {
            "POSEKIT_MAX_SESSIONS": str(max(100, live)),
            "POSEKIT_MAX_STORED_SESSIONS": str(max(1000, live)),
        }
        if args.pythonpath:
            environment["PYTHONPATH"] = args.pythonpath
        if args.capacity is not None:
            environment["POSEKIT_SOLVE_CAPACITY"] = str(args.capacity)
        server = start_server(port, environment)
        base, pid = f"http://127.0.0.1:{port}", server.pid
    rows = []
    try:
        if args.scenario == "heavy":
            rows += run(heavy_scenario(base, pid, args))
        else:
            kind = LIGHT if args.kind == "light" else run(fetch_heavy_kind(base))
            for count in (int(n) for n in args.sessions.split(",")):
                rows += run(run_level(base, pid, [(kind, count)], args.seconds, args.warmup, mode))
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
    print(
        f"posekit server load ({args.scenario}): sessions at 60 Hz, targets at {args.target_hz:g} Hz per "
        f"session, {args.seconds:.0f} s per row, {os.cpu_count()} CPUs, server "
        f"{args.pythonpath or 'installed'}, "
        f"states as {mode.encoding}, {'polite' if args.polite else 'eager'} {args.clients} clients"
    )
    header = (
        f"{'sessions':>28} | {'states/s/session':>16} | {'slowest':>7} | {'p50 ms':>6} | "
        f"{'p95 ms':>6} | {'p99 ms':>6} | {'targets':>7} | {'server CPU':>10} | "
        f"{'API CPU':>7} | {'client CPU':>10} | {'throttled':>9} | {'states/s':>8} | "
        f"{'solver µs/state':>15} | {'API µs/state':>12} | {'changes/state':>13} | "
        f"{'REST p95 ms':>11}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        print(
            f"{r['sessions']:>28} | {r['rate_mean']:>16.1f} | {r['rate_min']:>7.1f} | "
            f"{r['p50']:>6.1f} | {r['p95']:>6.1f} | {r['p99']:>6.1f} | {r['samples']:>7} | "
            f"{r['server_cpu']:>9.0f}% | {r['api_cpu']:>6.0f}% | {r['client_cpu']:>9.0f}% | "
            f"{r['throttled']:>8.0f}% | {r['total_rate']:>8.0f} | {r['solver_us']:>15.0f} | "
            f"{r['api_us']:>12.0f} | {r['applied']:>13.2f} | {r['rest_p95']:>11.1f}"
        )


def client_mode(args: argparse.Namespace) -> ClientMode:
    encoding = "binary" if args.clients == "lean" else args.format
    return ClientMode(encoding, args.target_hz, args.polite, args.clients)


async def fetch_heavy_kind(base: str) -> Kind:
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        return await heavy_kind(http)


async def heavy_scenario(base: str, pid: int, args: argparse.Namespace) -> list[dict]:
    groups = [(LIGHT, args.light), (await fetch_heavy_kind(base), args.heavy)]
    return await run_level(base, pid, groups, args.seconds, args.warmup, client_mode(args))


if __name__ == "__main__":
    main()
