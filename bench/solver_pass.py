"""Instructions per step of a solver process, deterministic (for ``valgrind --tool=callgrind``).

Builds N arm7 mirrors in a :class:`~posekit.sessions.loops.solver_worker.MirrorHost`
(JSON watchers, as ``bench/server_load.py --target-hz 0``): each session's ``ee``
target is moved once and its tolerance set to 1e-300, so every mirror keeps stepping.
The host's scheduler runs pass after pass on a fake monotonic clock (so the passes and
their batches are the same on every run), its states go down a real pipe, and this
process drains them (``recv_bytes``; ``--read``: ``recv``, the server side's unpickling).

After 5 warm-up steps a session, the measured passes run inside ``functools.reduce``:

    CG_TOGGLE=1 PYTHONPATH=server valgrind --tool=callgrind --instr-atstart=no \\
        --toggle-collect=functools_reduce --callgrind-out-file=/tmp/pass.cg \\
        python bench/solver_pass.py 100 10

counts only them (``CG_TOGGLE`` switches the instrumentation on after the warm-up);
divide the total by the measured steps printed. Without valgrind it just runs.

    python bench/solver_pass.py SESSIONS STEPS_PER_SESSION [--read]
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import time
import types
from multiprocessing import Pipe

from posekit.robots import RobotRegistry
from posekit.sessions.loops import fair_share
from posekit.sessions.loops import scheduler as scheduler_module
from posekit.sessions.loops.messages import Open
from posekit.sessions.loops.solve_loop import StreamCounters
from posekit.sessions.loops.solver_worker import MirrorHost
from posekit.sessions.manager import SessionManager

PASSES_PER_CALL = 50


class FakeClock:
    """A monotonic clock that moves only when told to [s]."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def open_mirrors(host: MirrorHost, registry: RobotRegistry, sessions: int) -> None:
    """Open ``sessions`` arm7 mirrors whose targets are out of reach (they keep stepping)."""
    manager = SessionManager(registry)
    for i in range(sessions):
        session = manager.create({"robot": "arm7"})
        position = list(session.task("ee").target.position)  # type: ignore[union-attr]
        position[1] += 0.05 + 0.001 * i
        position[2] -= 0.03
        session.set_target("ee", {"position": position})
        session.set_solver({"tolerance": 1e-300})
        counters = StreamCounters(session.revision, session.state.seq, None, frozenset({"json"}))
        host.handle(Open(session.id, i + 1, "arm7", session.entry, session.spec(), counters))


def main() -> None:
    sessions, steps = int(sys.argv[1]), int(sys.argv[2])
    clock = FakeClock()
    fake_time = types.SimpleNamespace(
        monotonic=clock.monotonic, thread_time=time.thread_time, perf_counter=time.perf_counter
    )
    scheduler_module.time = fake_time  # type: ignore[assignment]
    fair_share.time = fake_time  # type: ignore[assignment]
    registry = RobotRegistry(menagerie=False)
    ours, theirs = Pipe(duplex=True)
    host = MirrorHost(theirs, registry)
    open_mirrors(host, registry, sessions)
    receive = ours.recv if "--read" in sys.argv else ours.recv_bytes
    scheduler = host.scheduler

    def one_pass(_: object, __: int) -> None:
        delay = scheduler.step_due()
        while ours.poll():
            receive()
        if delay:
            clock.now += delay

    while scheduler.steps < 5 * sessions:
        one_pass(None, 0)
    before = scheduler.steps
    if os.environ.get("CG_TOGGLE"):
        command = ["callgrind_control", "-i", "on", str(os.getpid())]
        subprocess.run(command, check=False, capture_output=True)
        time.sleep(1.0)
    while scheduler.steps < before + steps * sessions:
        functools.reduce(one_pass, range(PASSES_PER_CALL), None)
    running = sum(s.state.status == "running" for s in host.sessions.values())
    print(f"measured steps {scheduler.steps - before} (running {running}/{sessions})")


if __name__ == "__main__":
    main()
