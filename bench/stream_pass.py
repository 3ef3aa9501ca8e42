"""Instructions the server process spends per state forwarded and per target received.

This process is the server: ``posekit.app.create_app`` (default settings, no
Menagerie) served by uvicorn on uvloop on a loopback port, configured as ``posekit up``
configures it (``posekit.cli.uvicorn_config``; ``--ws`` picks another websocket
implementation). It opens N arm7 sessions stepping at ``--hz`` (their ``ee`` target
moved once, their tolerance out of reach: they never park; ``stream_hz`` 240, so no
state waits for the stream's rate limit and the counts do not depend on timer jitter),
solved by one solver process. The websocket clients, one per session, run in a child
process (``--client``), and so does the solver: valgrind does not follow ``exec``, so
it counts this process only — uvicorn's protocol, ASGI, Starlette, posekit and the
thread reading the solver's pipe.

Measured phases, each bracketed so that nothing is in flight at its edges (the solver
process stopped with SIGSTOP, the server drained, the clients' counts read):

- idle: ``--seconds`` with the solver stopped: the loop's timers and housekeeping
  threads, subtracted from the other phases pro rata of their wall time;
- watch: ``--seconds`` of the solver running, the clients only read: **per state
  forwarded** = instructions / states received;
- polite: each client sends ``--targets`` ``ee`` targets, each once the state answering
  the previous came: **per target applied** = (instructions − states × per state) /
  targets (receiving, checking, the credit, applying, the change to the solver);
- burst: the solver stopped, each client sends ``--burst`` targets at once (an eager
  client's targets past saturation): the first is applied, the later ones wait — in the
  server's kernel, unread, once the credit holds the client's reads — and replace each
  other; then the solver runs until every client has the answer to its last target
  (the held bytes read in one go, the newest applied): **per target replaced** =
  (instructions − states × per state − applied × per target applied) / the targets
  not applied, where *applied* counts the sessions' revisions. (The credit's hold is
  set to an hour here, so that a slow run does not apply waiting targets early.)

Before them, one polite and one burst phase warm up the paths (not counted).

    CG_OUT=/tmp/stream.cg PYTHONPATH=server valgrind --tool=callgrind --instr-atstart=no \
        --callgrind-out-file=/tmp/stream.cg python bench/stream_pass.py 10 [--ws websockets]

(``CG_OUT`` names the same file: the script switches the instrumentation on for each
phase with ``callgrind_control``, dumps it after and reads the dumps' totals; add
``--separate-threads=yes`` to see the event loop's thread apart, printed per phase.)
Repeated runs agree within about 10 % per state (the batches the solver sends vary)
and 3 % per target. Without valgrind it just runs and prints the counts.

    python bench/stream_pass.py SESSIONS [--hz 20] [--seconds 5] [--targets 20]
                                [--burst 20] [--ws websockets|websockets-sansio]

(``--ws``: one of uvicorn's own implementations instead of ``posekit.ws_protocol``.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DRAIN_S = 1.5  # [s] after SIGSTOP: every state and target in flight arrives


def arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("sessions", type=int)
    parser.add_argument("--hz", type=float, default=20.0)
    parser.add_argument("--targets", type=int, default=20, help="polite targets a client")
    parser.add_argument("--burst", type=int, default=20, help="burst targets a client")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--ws", default=None)
    parser.add_argument("--client", default=None, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--ids", default="", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


# ---------------------------------------------------------------- clients (child process)


class Client:
    """One session's websocket client: counts the states, sends targets on request."""

    def __init__(self, ws: Any, center: list[float], index: int) -> None:
        self.ws, self.center, self.index = ws, center, index
        self.states = self.sent = 0
        self.answered = -1  # the newest ref a state echoed
        self.answer = asyncio.Event()

    async def read(self) -> None:
        async for raw in self.ws:
            message = json.loads(raw)
            if message["type"] == "state":
                self.states += 1
                if message["ref"] is not None and message["ref"] > self.answered:
                    self.answered = message["ref"]
                    self.answer.set()

    async def send(self) -> int:
        """One ``ee`` target (on a circle of 5 cm), its ``ref``."""
        ref, self.sent = self.sent, self.sent + 1
        angle = 0.3 * ref + self.index
        x, y, z = self.center
        position = [x + 0.05 * math.cos(angle), y + 0.05 * math.sin(angle), z]
        message = {"type": "target", "task": "ee", "position": position, "ref": ref}
        await self.ws.send(json.dumps(message))
        return ref

    async def polite(self, count: int) -> None:
        """``count`` targets, each sent once the state answering the previous came."""
        for _ in range(count):
            ref = await self.send()
            while self.answered < ref:
                self.answer.clear()
                await self.answer.wait()

    async def burst(self, count: int) -> None:
        """``count`` targets at once."""
        for _ in range(count):
            await self.send()

    async def answered_all(self) -> None:
        """Until a state answers the last target sent."""
        while self.answered < self.sent - 1:
            self.answer.clear()
            await self.answer.wait()


async def client_main(args: argparse.Namespace) -> None:
    """One websocket per session; obeys the server's lines on stdin, answers on stdout:
    ``count`` (states received, targets sent), ``polite K``, ``burst B``, ``answered``
    (``done``)."""
    from websockets.asyncio.client import connect

    clients: list[Client] = []
    readers = []
    for index, session_id in enumerate(args.ids.split(",")):
        url = f"ws://127.0.0.1:{args.client}/api/sessions/{session_id}/stream"
        ws = await connect(url, max_size=1 << 22, compression=None)
        hello = json.loads(await ws.recv())
        clients.append(Client(ws, hello["tasks"][0]["target"]["position"], index))
        readers.append(asyncio.create_task(clients[-1].read()))
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    print("ready", flush=True)
    while line := (await reader.readline()).decode().strip():
        command, _, count = line.partition(" ")
        if command == "count":
            print(sum(c.states for c in clients), sum(c.sent for c in clients), flush=True)
            continue
        if command == "polite":
            await asyncio.gather(*(c.polite(int(count)) for c in clients))
        elif command == "burst":
            await asyncio.gather(*(c.burst(int(count)) for c in clients))
        elif command == "answered":
            await asyncio.gather(*(c.answered_all() for c in clients))
        print("done", flush=True)
    for task in readers:
        task.cancel()


# ----------------------------------------------------------------- server (this process)


def open_sessions(app: Any, sessions: int, hz: float) -> list[str]:
    """N arm7 sessions that keep stepping at ``hz``."""
    manager = app.state.manager
    ids = []
    for i in range(sessions):
        session = manager.create({"robot": "arm7"})
        position = list(session.task("ee").target.position)
        position[1] += 0.05 + 0.001 * i
        position[2] -= 0.03
        session.set_target("ee", {"position": position})
        session.set_solver({"tolerance": 1e-300, "rate_hz": hz, "stream_hz": 240.0})
        ids.append(session.id)
    return ids


class Callgrind:
    """Switches callgrind's instrumentation of this process on and off, dumps it and reads
    the dumps' totals (a no-op without ``CG_OUT``)."""

    def __init__(self, out: str | None) -> None:
        self.out = out
        self.dumps = 0

    def _control(self, *flags: str) -> None:
        command = ["callgrind_control", *flags, str(os.getpid())]
        subprocess.run(command, check=False, capture_output=True)

    def on(self) -> None:
        if self.out:
            self._control("-i", "on")

    def dump(self) -> int | None:
        """Dump, switch off; the instructions counted since :meth:`on`."""
        if not self.out:
            return None
        self._control("-d")
        self._control("-i", "off")
        self.dumps += 1
        out = Path(self.out)
        dumps = sorted(out.parent.glob(f"{out.name}.{self.dumps}"))
        dumps += sorted(out.parent.glob(f"{out.name}.{self.dumps}-*"))  # --separate-threads
        totals = [_total(dump) for dump in dumps]
        if len(totals) > 1:
            print(f"  threads: {[f'{t:,}' for t in totals]}", flush=True)
        return sum(totals)


def _total(dump: Path) -> int:
    """The instructions a callgrind dump counted."""
    for line in dump.read_text().splitlines():
        if line.startswith("totals:"):
            return int(line.split()[1])
    return 0


async def ask(client: asyncio.subprocess.Process, line: str) -> str:
    """A line to the clients, their answer."""
    assert client.stdin is not None and client.stdout is not None
    client.stdin.write(f"{line}\n".encode())
    await client.stdin.drain()
    return (await client.stdout.readline()).decode().strip()


@dataclass
class Phase:
    """What one measured phase counted."""

    instructions: int | None
    seconds: float  # [s] wall clock, the drain included
    states: int
    targets: int
    applied: int  # the sessions' revisions: targets applied


async def phase(
    client: asyncio.subprocess.Process,
    solver: int,
    cg: Callgrind,
    command: str,
    seconds: float,
    revisions: Callable[[], int],
) -> Phase:
    """One measured phase: ``idle`` (``seconds``, the solver process stopped), ``watch``
    (``seconds``, it runs, the clients read), ``polite K`` (it runs, the clients send K
    targets each, one per answer) or ``burst B`` (stopped, the clients send B targets at
    once each; then it runs until each has the answer to its last); then the solver
    process is stopped and the server drains. ``revisions``: the sessions' in all."""
    states0, sent0 = map(int, (await ask(client, "count")).split())
    revisions0 = revisions()
    start = time.monotonic()
    cg.on()
    if command == "watch" or command.startswith("polite"):
        os.kill(solver, signal.SIGCONT)
    if command in ("idle", "watch"):
        await asyncio.sleep(seconds)
    else:
        await ask(client, command)
    if command.startswith("burst"):
        os.kill(solver, signal.SIGCONT)
        await ask(client, "answered")
    os.kill(solver, signal.SIGSTOP)
    await asyncio.sleep(DRAIN_S)
    instructions = cg.dump()
    elapsed = time.monotonic() - start
    states1, sent1 = map(int, (await ask(client, "count")).split())
    applied = revisions() - revisions0
    return Phase(instructions, elapsed, states1 - states0, sent1 - sent0, applied)


async def settle(solver: int) -> None:
    """Let the solver process answer what waits, then stop it and drain."""
    os.kill(solver, signal.SIGCONT)
    await asyncio.sleep(2.0)
    os.kill(solver, signal.SIGSTOP)
    await asyncio.sleep(DRAIN_S)


async def serve(args: argparse.Namespace) -> None:
    import uvicorn
    from posekit.api.target_credit import TargetCredit
    from posekit.app import create_app
    from posekit.cli import uvicorn_config
    from posekit.settings import Settings

    settings = Settings.from_env({}).model_copy(
        update={"menagerie_download": False, "max_sessions": max(100, args.sessions)}
    )
    # A burst's targets wait for the answer to the first however long the server takes.
    TargetCredit.__init__.__defaults__ = (3600.0, *TargetCredit.__init__.__defaults__[1:])
    app = create_app(settings)
    config = uvicorn_config(app, settings, **({"ws": args.ws} if args.ws else {}))
    server = uvicorn.Server(config)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    serving = asyncio.create_task(server.serve(sockets=[listener]))
    while not server.started:
        await asyncio.sleep(0.05)
    ids = await asyncio.to_thread(open_sessions, app, args.sessions, args.hz)
    command = [sys.executable, __file__, str(args.sessions), "--client", str(port)]
    command.append("--ids=" + ",".join(ids))  # "=": an id may begin with "-"
    client = await asyncio.create_subprocess_exec(
        *command, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert client.stdout is not None
    await client.stdout.readline()  # ready
    (solver,) = app.state.manager.solve_loop.pids()  # not its spare
    while int((await ask(client, "count")).split()[0]) < 20 * args.sessions:
        await asyncio.sleep(0.5)  # the solver process starts, compiles, warms up
    os.kill(solver, signal.SIGSTOP)
    await asyncio.sleep(DRAIN_S)
    manager = app.state.manager

    def revisions() -> int:
        return sum(manager.get(session_id).revision for session_id in ids)

    warm = Callgrind(None)  # not counted: the first targets take one-time paths
    await phase(client, solver, warm, f"polite {args.targets}", 0.0, revisions)
    await phase(client, solver, warm, f"burst {args.burst}", 0.0, revisions)
    await settle(solver)
    cg = Callgrind(os.environ.get("CG_OUT"))
    phases = [
        await phase(client, solver, cg, "idle", args.seconds, revisions),
        await phase(client, solver, cg, "watch", args.seconds, revisions),
        await phase(client, solver, cg, f"polite {args.targets}", 0.0, revisions),
        await phase(client, solver, cg, f"burst {args.burst}", 0.0, revisions),
    ]
    os.kill(solver, signal.SIGCONT)
    report(config, *phases)
    client.kill()
    await client.wait()
    server.should_exit = True
    await serving


def report(config: Any, idle: Phase, watch: Phase, polite: Phase, burst: Phase) -> None:
    """Each phase's instructions beyond the idle phase's for as long (the loop's timers,
    the housekeeping threads): per state in ``watch``; per target in ``polite`` beyond its
    states; per replaced target in ``burst`` beyond its states and the targets applied."""
    print(f"ws={config.ws} http={config.http}")
    for name, counted in (("idle", idle), ("watch", watch), ("polite", polite), ("burst", burst)):
        print(
            f"{name:7} {counted.seconds:5.1f} s  states {counted.states:6}  targets {counted.targets:6}"
            + f"  applied {counted.applied:6}"
            + (f"  instructions {counted.instructions:,}" if counted.instructions else "")
        )
    if idle.instructions is None:
        return
    per_second = idle.instructions / idle.seconds

    def beyond_idle(counted: Phase) -> float:
        assert counted.instructions is not None
        return counted.instructions - per_second * counted.seconds

    per_state = beyond_idle(watch) / watch.states
    per_target = (beyond_idle(polite) - per_state * polite.states) / polite.targets
    beyond = beyond_idle(burst) - per_state * burst.states - per_target * burst.applied
    per_replaced = beyond / (burst.targets - burst.applied)
    print(f"per state forwarded      {per_state:10,.0f}")
    print(f"per target applied       {per_target:10,.0f}")
    print(f"per target replaced      {per_replaced:10,.0f}")


def main() -> None:
    args = arguments(sys.argv[1:])
    import uvloop

    if args.client is not None:
        uvloop.run(client_main(args))
    else:
        uvloop.run(serve(args))


if __name__ == "__main__":
    main()
