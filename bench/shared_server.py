"""A shared server under strangers: a bystander's latency beside heavy, uploading and
flooding neighbours, and the server's memory after session churn.

Starts ``posekit up`` (no token, a temporary data folder) and one *bystander*: an arm7
session whose client drags its ``ee`` target at 20 Hz over the websocket, each target
with a ``ref``; its latency is from sending a target to the first state whose ``ref``
is at least the target's. Printed per scenario, each for ``--seconds``:

- ``alone``: the bystander by itself;
- ``heavy``: beside a session on a heavy chain the default caps admit (an uploaded
  200-DoF chain held at its joint limits, dragged; its state's solve time is printed),
  kept stepping;
- ``uploaders``: beside 50 clients uploading a small robot over and over (each 201 is
  deleted again; 429 ``uploads_busy`` counted); ``GET /api/health`` and ``GET
  /api/sessions/{id}`` are probed every 50 ms, their p95 printed;
- ``flood1``, ``flood5``: beside 1 or 5 clients, each on a session of its own, sending
  small target messages as fast as the socket takes them and reconnecting when cut off
  (the cut-offs, close code 1008, are counted).

``--churn-s S`` (0 = skip): then sessions are created and deleted over the 8 Menagerie
robots of ``MENAGERIE_ROOT`` for ``S`` seconds, each opened in a viewer (its websocket,
read for a second), and the server's RSS is printed fresh, at its peak and after
``--idle-s`` (150) s idle.

    python bench/shared_server.py [--seconds 10] [--scenarios alone,heavy,...] [--churn-s 600]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import viser
import websockets
from server_load import free_port, percentile, start_server

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.robot_files import chain, write_mjcf_arm, zip_folder

ROBOTS = ["aloha", "franka_emika_panda", "kuka_iiwa_14", "shadow_hand", "stanford_tidybot",
          "unitree_g1", "unitree_h1", "universal_robots_ur5e"]  # fmt: skip
UPLOADERS = 50
UNANSWERED = [0]  # the bystander's targets no state answered (a scenario's figure)
PROBE_S = 0.05


async def drag(ws_url: str, seconds: float, hz: float = 20.0, task: str = "ee") -> list[float]:
    """Drag ``task``'s target for ``seconds``; the target→state latencies [ms]."""
    sent: dict[int, float] = {}
    latencies: list[float] = []
    unanswered = UNANSWERED
    async with websockets.connect(ws_url, max_size=None) as ws:

        async def read() -> None:
            answered = -1
            async for raw in ws:
                ref = json.loads(raw).get("ref")
                if isinstance(ref, int) and ref > answered:
                    now = time.perf_counter()
                    latencies.extend(1e3 * (now - sent[r]) for r in range(answered + 1, ref + 1))
                    answered = ref

        reader = asyncio.create_task(read())
        for ref in range(int(seconds * hz)):
            position = [0.35 + 0.05 * (ref % 20) / 20, 0.1, 0.5]
            sent[ref] = time.perf_counter()
            await ws.send(
                json.dumps({"type": "target", "task": task, "position": position, "ref": ref})
            )
            await asyncio.sleep(1 / hz)
        await asyncio.sleep(2.0)  # the last answers
        reader.cancel()
    unanswered[0] += len(sent) - len(latencies)
    return latencies


def flood_forever(url: str) -> None:
    """Send targets as fast as the socket takes them, reconnecting when cut off (run in a
    process of its own: ``--flood URL``)."""
    from websockets.sync.client import connect

    message = json.dumps({"type": "target", "task": "ee", "position": [0.4, 0.0, 0.4]})
    while True:
        try:
            with connect(url, max_size=None, open_timeout=60) as ws:
                while True:
                    ws.send(message)
        except (websockets.ConnectionClosed, OSError):
            time.sleep(0.01)


async def upload_loop(
    http: httpx.AsyncClient, index: int, stop: asyncio.Event, busy: list[int]
) -> None:
    """Upload a small robot over and over (deleting each), counting 429s."""
    folder = Path(tempfile.mkdtemp(prefix="posekit-upload-"))
    write_mjcf_arm(folder, name=f"up{index}")
    payload = zip_folder(folder)
    while not stop.is_set():
        answer = await http.post("/api/robots", files={"file": (f"up{index}.zip", payload)})
        if answer.status_code == 201:
            await http.delete(f"/api/robots/{answer.json()['name']}")
        elif answer.status_code == 429:
            busy[0] += 1
            await asyncio.sleep(float(answer.headers.get("retry-after", "1")))


async def probe(http: httpx.AsyncClient, path: str, stop: asyncio.Event, out: list[float]) -> None:
    while not stop.is_set():
        start = time.perf_counter()
        await http.get(path)
        out.append(1e3 * (time.perf_counter() - start))
        await asyncio.sleep(PROBE_S)


async def beside(
    base: str,
    bystander: str,
    seconds: float,
    neighbours: Callable[[asyncio.Event], list[Awaitable[None]]],
) -> list[float]:
    """The bystander's latencies while ``neighbours`` run."""
    stop = asyncio.Event()
    tasks = [asyncio.ensure_future(job) for job in neighbours(stop)]
    await asyncio.sleep(1.0)  # the neighbours under way
    latencies = await drag(ws_url(base, bystander), seconds)
    stop.set()
    await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 60)
    return latencies


def ws_url(base: str, session: str, path: str = "stream") -> str:
    return base.replace("http://", "ws://") + f"/api/sessions/{session}/{path}"


def line(name: str, latencies: list[float], extra: str = "") -> None:
    p50, p95 = percentile(latencies, 50), percentile(latencies, 95)
    extra = f"unanswered {UNANSWERED[0]}; {extra}"
    UNANSWERED[0] = 0
    print(
        f"{name:10s} bystander target→state p50 {p50:7.1f} ms  p95 {p95:7.1f} ms  (n={len(latencies)}) {extra}",
        flush=True,
    )


async def alone(http: httpx.AsyncClient, base: str, bystander: str, seconds: float) -> None:
    line("alone", await drag(ws_url(base, bystander), seconds))


async def heavy(http: httpx.AsyncClient, base: str, bystander: str, seconds: float) -> None:
    answer = await http.post("/api/robots", files={"file": ("heavy.xml", chain(200).encode())})
    answer.raise_for_status()
    create = {"robot": answer.json()["name"], "solver": {"tolerance": 1e-12}}  # keeps stepping
    session = (await http.post("/api/sessions", json=create)).json()["id"]
    dragged = drag(ws_url(base, session), seconds + 2, task="tool")  # out of reach: running
    latencies = await beside(base, bystander, seconds, lambda stop: [dragged])
    state = (await http.get(f"/api/sessions/{session}/state")).json()
    line("heavy", latencies, f"beside {state['solve_us'] / 1e3:.1f} ms steps, {state['status']}")
    await http.delete(f"/api/sessions/{session}")


async def uploaders(http: httpx.AsyncClient, base: str, bystander: str, seconds: float) -> None:
    busy: list[int] = [0]
    health: list[float] = []
    reads: list[float] = []

    def neighbours(stop: asyncio.Event) -> list[Awaitable[None]]:
        return [
            *(upload_loop(http, index, stop, busy) for index in range(UPLOADERS)),
            probe(http, "/api/health", stop, health),
            probe(http, f"/api/sessions/{bystander}", stop, reads),
        ]

    latencies = await beside(base, bystander, seconds, neighbours)
    line(
        "uploaders",
        latencies,
        f"health p95 {percentile(health, 95):.1f} ms, session read p95 "
        f"{percentile(reads, 95):.1f} ms, 429 uploads_busy {busy[0]}",
    )


async def flooders(
    http: httpx.AsyncClient, base: str, bystander: str, seconds: float, count: int
) -> None:
    sessions = [
        (await http.post("/api/sessions", json={"robot": "arm7"})).json()["id"]
        for _ in range(count)
    ]
    script = [sys.executable, __file__, "--flood"]
    processes = [
        subprocess.Popen([*script, ws_url(base, s)], stdout=subprocess.PIPE, text=True)
        for s in sessions
    ]
    before = await cut_offs(http)
    latencies = await beside(base, bystander, seconds, lambda stop: [])
    cut = await cut_offs(http) - before
    for process in processes:
        process.terminate()
        process.wait(30)
    line(f"flood{count}", latencies, f"flooders cut off {cut:.0f} times")
    for session in sessions:
        await http.delete(f"/api/sessions/{session}")


async def cut_offs(http: httpx.AsyncClient) -> float:
    """How many stream clients the server cut off for flooding, so far (its metrics)."""
    metrics = (await http.get("/api/metrics")).text
    prefix = 'posekit_websocket_refused_total{code="flooding"}'
    return sum(float(m.split()[1]) for m in metrics.splitlines() if m.startswith(prefix))


async def scenarios(base: str, names: list[str], seconds: float) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=120) as http:
        bystander = (await http.post("/api/sessions", json={"robot": "arm7"})).json()["id"]
        for name in names:
            if name.startswith("flood"):
                await flooders(http, base, bystander, seconds, int(name[5:]))
            else:
                await {"alone": alone, "heavy": heavy, "uploaders": uploaders}[name](
                    http, base, bystander, seconds
                )


def rss_mib(pid: int) -> float:
    for entry in Path(f"/proc/{pid}/status").read_text().splitlines():
        if entry.startswith("VmRSS:"):
            return int(entry.split()[1]) / 1024
    return 0.0


async def churn(base: str, pid: int, seconds: float, idle_s: float) -> None:
    """Sessions over the 8 robots, each opened in a viewer, for ``seconds``; RSS figures."""
    fresh, peak, end = rss_mib(pid), 0.0, time.monotonic() + seconds
    protocol = [websockets.Subprotocol(f"viser-v{viser.__version__}")]
    async with httpx.AsyncClient(base_url=base, timeout=120) as http:
        cycles = 0
        while time.monotonic() < end:
            robot = ROBOTS[cycles % len(ROBOTS)]
            session = (await http.post("/api/sessions", json={"robot": robot})).json()["id"]
            viewer = base.replace("http://", "ws://") + f"/viewer/{session}"
            async with websockets.connect(viewer, subprotocols=protocol, max_size=None) as ws:
                read_until = time.monotonic() + 1.0
                while time.monotonic() < read_until:
                    try:
                        await asyncio.wait_for(ws.recv(), read_until - time.monotonic())
                    except TimeoutError:
                        break
            peak = max(peak, rss_mib(pid))
            await http.delete(f"/api/sessions/{session}")
            cycles += 1
    await asyncio.sleep(idle_s)
    idle = rss_mib(pid)
    print(f"churn      {cycles} sessions over {len(ROBOTS)} robots with a viewer each in {seconds:g} s: "
          f"RSS fresh {fresh:.0f} MiB, peak {peak:.0f} MiB, idle after {idle_s:g} s {idle:.0f} MiB ({idle / fresh - 1:+.0%})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--scenarios", default="alone,heavy,uploaders,flood1,flood5")
    parser.add_argument("--churn-s", type=float, default=0.0)
    parser.add_argument("--idle-s", type=float, default=150.0)
    parser.add_argument("--flood", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.flood:
        flood_forever(args.flood)
        return
    port = free_port()
    data = tempfile.mkdtemp(prefix="posekit-shared-")
    environment = {
        "POSEKIT_DATA_DIR": data,
        "POSEKIT_MENAGERIE_DOWNLOAD": "false",
        "POSEKIT_LOG_LEVEL": "warning",
    }
    process = start_server(port, dict(environment, POSEKIT_MAX_UPLOADED_ROBOTS="60"))
    base = f"http://127.0.0.1:{port}"
    try:
        asyncio.run(scenarios(base, [s for s in args.scenarios.split(",") if s], args.seconds))
        if args.churn_s > 0 and os.environ.get("MENAGERIE_ROOT"):
            asyncio.run(churn(base, process.pid, args.churn_s, args.idle_s))
    finally:
        process.terminate()
        process.wait(30)


if __name__ == "__main__":
    main()
