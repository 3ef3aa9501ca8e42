"""Cost per batch of states in the server process: read from a solver pipe, adopted,
watchers woken and served (deterministic enough for ``valgrind --tool=callgrind``).

A :class:`SolverProcesses` with one link, started on this process's event loop as the
app's lifespan does, serves N arm7 sessions, each with one watcher (a task that takes
every update and its JSON, as a websocket stream does, without the socket). Its solver
process is a fake (:func:`feed`): it answers the opens and sends B batches of N states
each (JSON encoded ahead, as the real one's), keeping at most two batches unanswered
like the real one (:mod:`~posekit.sessions.loops.batch_credit`; ``CREDIT`` 1: a batch
only once the previous one was answered, the same sequence of events on every run, for
callgrind). No IK runs: only the server process's side of the pipe is measured.

    PYTHONPATH=server python bench/server_pipe.py SESSIONS BATCHES [CREDIT]

prints the states the watchers got, this process's CPU time [µs] and context switches
(all its threads) per batch. Instructions per batch: ``CG_TOGGLE`` switches callgrind's
instrumentation on once the watchers are ready and off once every state was adopted;
count two runs and divide the difference by the difference in batches (what the
switching itself costs cancels out):

    for b in 100 300; do CG_TOGGLE=1 PYTHONHASHSEED=0 PYTHONPATH=server valgrind \\
        --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/pipe.$b.cg \\
        python bench/server_pipe.py 100 $b 1; done
    grep totals /tmp/pipe.100.cg /tmp/pipe.300.cg
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import pickle
import resource
import subprocess
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path

from posekit.robots import RobotRegistry
from posekit.sessions.loops.messages import (
    Batch,
    Consumed,
    Open,
    Ready,
    Solved,
    States,
    Stop,
)
from posekit.sessions.loops.solver_link import Spawned
from posekit.sessions.loops.solver_processes import SolverProcesses
from posekit.sessions.manager import SessionManager
from posekit.sessions.state import SessionState

CREDIT = 2  # batches unanswered at most, as the real solver process


def feed(connection: Connection, sessions: int, batches: int, credit: int = CREDIT) -> None:
    """The fake solver process: wait for ``sessions`` opens, then send ``batches``."""
    connection.send_bytes(pickle.dumps(Ready(), pickle.HIGHEST_PROTOCOL))
    opened: dict[str, Open] = {}
    while len(opened) < sessions:
        for message in _messages(connection.recv()):
            if isinstance(message, Open):
                opened[message.session_id] = message
    in_flight = sent = 0
    q = [0.1 * k for k in range(7)]
    while sent < batches or in_flight:
        if sent < batches and in_flight < credit:
            states = []
            for session_id, open_ in opened.items():
                seq = open_.counters.seq + 1 + sent
                state = SessionState(
                    seq,
                    1.7e9 + sent / 60,
                    q,
                    {"ee": 0.01, "posture": 0.2},
                    False,
                    "running",
                    None,
                    40.0,
                )
                state.revision = open_.counters.revision
                state.encode(frozenset({"json"}))
                states.append(Solved(session_id, open_.epoch, state))
            connection.send_bytes(pickle.dumps(States(states), pickle.HIGHEST_PROTOCOL))
            sent += 1
            in_flight += 1
            continue
        for message in _messages(connection.recv()):
            if isinstance(message, Consumed):
                in_flight -= 1
            elif isinstance(message, Stop):
                return
    while not any(isinstance(m, Stop) for m in _messages(connection.recv())):
        pass


def _messages(received: object) -> list[object]:
    return list(received.messages) if isinstance(received, Batch) else [received]


class FakeSolverProcesses(SolverProcesses):
    """Solver processes that are :func:`feed`, and no spare."""

    def __init__(self, sessions: int, batches: int, credit: int) -> None:
        super().__init__(1, RobotRegistry(menagerie=False))
        self._plan = (sessions, batches, credit)

    def new_process(self, name: str) -> Spawned:
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe(duplex=True)
        process = context.Process(target=feed, args=(theirs, *self._plan), daemon=True)
        process.start()
        theirs.close()
        return Spawned(process, ours, time.monotonic())

    def link_ready(self) -> None:
        pass


async def serve(sessions: int, batches: int, credit: int = CREDIT) -> int:
    """Run the link and the watchers until every state was adopted; their count. (A
    watcher may skip a state that a newer one replaced before its turn: latest wins.)"""
    processes = FakeSolverProcesses(sessions, batches, credit)
    with SessionManager(RobotRegistry(menagerie=False), solve_loop=processes) as manager:
        created = [manager.create({"robot": "arm7"}) for _ in range(sessions)]
        taken = [0]

        async def watch(subscription: object) -> None:
            async for update in subscription:  # type: ignore[attr-defined]
                if update.state is not None:
                    update.state.json()
                    taken[0] += 1

        subscriptions = [s.subscribe(initial_state=False, encoding="json") for s in created]
        watchers = [asyncio.create_task(watch(s)) for s in subscriptions]
        _callgrind("on")
        started, cpu = time.monotonic(), _cpu()
        while processes.steps < sessions * batches and time.monotonic() - started < 600:
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.05)  # the watchers' last turn
        cpu = _cpu() - cpu
        _callgrind("off")
        switches, adopted = _switches(), processes.steps
        for watcher, subscription in zip(watchers, subscriptions, strict=True):
            watcher.cancel()
            subscription.close()
        await asyncio.gather(*watchers, return_exceptions=True)
    print(
        f"{adopted} states adopted, {taken[0]} taken by watchers, in {batches} "
        f"batches of {sessions}; "
        f"{1e6 * cpu / batches:.0f} µs CPU per batch ({1e6 * cpu / max(1, taken[0]):.1f} per state); "
        f"context switches so far: {switches}"
    )
    return adopted


def _callgrind(instrumentation: str) -> None:
    """Switch callgrind's instrumentation of this process (only with ``CG_TOGGLE``)."""
    if os.environ.get("CG_TOGGLE"):
        command = ["callgrind_control", "-i", instrumentation, str(os.getpid())]
        subprocess.run(command, check=False, capture_output=True)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _switches() -> str:
    voluntary = involuntary = 0
    for status in Path("/proc/self/task").glob("*/status"):
        for line in status.read_text().splitlines():
            if line.startswith("voluntary_ctxt_switches"):
                voluntary += int(line.split()[1])
            elif line.startswith("nonvoluntary_ctxt_switches"):
                involuntary += int(line.split()[1])
    return f"{voluntary} voluntary, {involuntary} involuntary (live threads)"


if __name__ == "__main__":
    count, batch_count, *rest = (int(arg) for arg in sys.argv[1:4])
    adopted = asyncio.run(serve(count, batch_count, *rest))
    sys.exit(0 if adopted == count * batch_count else 1)
