"""Instructions per step of a solver process, deterministic (for ``valgrind --tool=callgrind``).

Builds N arm7 mirrors in a :class:`~posekit.sessions.loops.solver_worker.MirrorHost`
(JSON watchers, as ``bench/server_load.py --target-hz 0``): each session's ``ee``
target is moved once and its tolerance set to 1e-300, so every mirror keeps stepping.
The host's scheduler runs pass after pass on a fake monotonic clock (so the passes and
their batches are the same on every run), its states go down a real pipe, and this
process drains them (``recv_bytes``; ``--read``: ``recv``, the server side's unpickling).

``--targets``: eager clients. Before each of a session's steps (warm-up and measured),
its ``ee`` target moves to the next point of a 5 cm circle around the moved target
(0.0785 rad a target: ``bench/server_load.py``'s clients at 20 Hz), through the road a
solver process takes: the change as the server's session made it, pickled as its
:class:`~posekit.sessions.loops.solver_link.SolverLink` sends it (made before the
measured passes), then unpickled and handed to :meth:`MirrorHost.handle` after the
pass that stepped the session (inside the measured region: a step then costs the
target's replay and the step answering it). Compare the instructions per step with
and without it.

After 5 warm-up steps a session, the measured passes run inside ``functools.reduce``:

    CG_TOGGLE=1 PYTHONPATH=server valgrind --tool=callgrind --instr-atstart=no \\
        --toggle-collect=functools_reduce --callgrind-out-file=/tmp/pass.cg \\
        python bench/solver_pass.py 100 10

counts only them (``CG_TOGGLE`` switches the instrumentation on after the warm-up);
divide the total by the measured steps printed. Without valgrind it just runs.

``--cpu``: the pipe is drained by a thread of its own (a pass of several hundred
sessions' states fills it), and the stepping thread's CPU time per measured step is
printed: how a step's cost grows with the number of sessions a solver process keeps
(their data no longer fits the caches), without the server or any client.

    python bench/solver_pass.py SESSIONS STEPS_PER_SESSION [--read] [--targets] [--cpu]
"""

from __future__ import annotations

import functools
import math
import pickle
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from multiprocessing import Pipe
from typing import Any

from callgrind import instrument
from posekit.robots import RobotRegistry
from posekit.sessions.changes import Change
from posekit.sessions.loops import fair_share
from posekit.sessions.loops import scheduler as scheduler_module
from posekit.sessions.loops.messages import Open, replay_of
from posekit.sessions.loops.solve_loop import StreamCounters
from posekit.sessions.loops.solver_worker import MirrorHost
from posekit.sessions.manager import SessionManager
from posekit.sessions.session import Session

PASSES_PER_CALL = 50
TARGET_STEP = 2 * math.pi * 0.25 / 20.0  # [rad] a target: server_load's clients at 20 Hz


class FakeClock:
    """A monotonic clock that moves only when told to [s]."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


class PickledChanges:
    """A solve loop for the server side's sessions that keeps each accepted change as
    the bytes a :class:`SolverLink` would send for it (one message a change)."""

    on_steps = None
    steps = 0

    def __init__(self) -> None:
        self.frames: dict[str, list[bytes]] = {}

    def changed(self, session: Session, change: Change) -> None:
        message = replay_of(session.id, session.revision, change)
        self.frames.setdefault(session.id, []).append(
            pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
        )

    def start(self) -> None: ...
    def stop(self, timeout: float = 5.0) -> None: ...
    def attach(self, session: Session) -> None: ...
    def remove(self, session: Session) -> None: ...
    def encodings(self, session: Session, encodings: frozenset[str]) -> None: ...


def open_mirrors(
    host: MirrorHost, registry: RobotRegistry, sessions: int, loop: PickledChanges
) -> list[Session]:
    """Open ``sessions`` arm7 mirrors whose targets are out of reach (they keep stepping);
    returns the server side's sessions (their changes go to ``loop``)."""
    manager = SessionManager(registry, solve_loop=loop, max_sessions=max(100, sessions))
    opened = []
    for i in range(sessions):
        session = manager.create({"robot": "arm7"})
        position = list(session.task("ee").target.position)  # type: ignore[union-attr]
        position[1] += 0.05 + 0.001 * i
        position[2] -= 0.03
        session.set_target("ee", {"position": position})
        session.set_solver({"tolerance": 1e-300})
        counters = StreamCounters(session.revision, session.state.seq, None, frozenset({"json"}))
        host.handle(Open(session.id, i + 1, "arm7", session.entry, session.spec(), counters))
        opened.append(session)
    return opened


def target_frames(
    sessions: list[Session], loop: PickledChanges, count: int
) -> dict[str, Iterator[bytes]]:
    """Per session, the pickled messages of ``count`` moves of its ``ee`` target, made by
    the session as a client's stream target (:meth:`Session.move_target`) and in order
    after its mirror's open."""
    loop.frames.clear()  # the changes before the opens
    for index, session in enumerate(sessions):
        x, y, z = session.task("ee").target.position  # type: ignore[union-attr,misc]
        for k in range(count):
            angle = TARGET_STEP * k + index
            position = [x + 0.05 * math.cos(angle), y + 0.05 * math.sin(angle), z]
            session.move_target("ee", {"position": position}, k)
    return {session_id: iter(frames) for session_id, frames in loop.frames.items()}


def move_targets_after_passes(host: MirrorHost, frames: dict[str, Iterator[bytes]]) -> None:
    """After each pass, hand each stepped mirror its next target, as a solver process
    receives it (unpickled, then :meth:`MirrorHost.handle`)."""
    publish: Callable[[list[Any]], None] = host.scheduler.on_pass  # type: ignore[assignment]
    loads, handle = pickle.loads, host.handle

    def on_pass(stepped: list[Any]) -> None:
        publish(stepped)
        for session in stepped:
            handle(loads(next(frames[session.id])))

    host.scheduler.on_pass = on_pass


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
    changes = PickledChanges()
    opened = open_mirrors(host, registry, sessions, changes)
    if "--targets" in sys.argv:  # every step but a session's first answers a moved target
        frames = target_frames(opened, changes, 4 * (steps + 5) + 20)
        move_targets_after_passes(host, frames)
    receive = ours.recv if "--read" in sys.argv else ours.recv_bytes
    scheduler = host.scheduler

    drained_apart = "--cpu" in sys.argv
    if drained_apart:

        def drain() -> None:
            while True:
                receive()

        threading.Thread(target=drain, daemon=True).start()

    def one_pass(_: object, __: int) -> None:
        delay = scheduler.step_due()
        while not drained_apart and ours.poll():
            receive()
        if delay:
            clock.now += delay

    while scheduler.steps < 5 * sessions:
        one_pass(None, 0)
    before = scheduler.steps
    instrument()
    cpu = time.thread_time()
    while scheduler.steps < before + steps * sessions:
        functools.reduce(one_pass, range(PASSES_PER_CALL), None)
    cpu = time.thread_time() - cpu
    running = sum(s.state.status == "running" for s in host.sessions.values())
    print(f"measured steps {scheduler.steps - before} (running {running}/{sessions})")
    if drained_apart:
        print(f"CPU per step {1e6 * cpu / (scheduler.steps - before):.1f} µs")


if __name__ == "__main__":
    main()
