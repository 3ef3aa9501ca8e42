"""Instructions per target applied, in the server process and in the solver process.

Deterministic and in one process (for ``valgrind --tool=callgrind``); no sockets, no
event loop. N arm7 sessions (``ee`` targets, as ``bench/stream_pass.py`` sends them):

- **server**: a client's target as the stream applies it
  (:func:`posekit.api.routes_stream.target_applier`: the target built, checked, merged,
  set on the session, the change handed to a :class:`SolverLink` and pickled as the
  bytes that go down the pipe); the link's channel is a stand-in that keeps the bytes.
- **solver**: those bytes as a solver process takes them (unpickled, then
  :meth:`MirrorHost.handle`: the change applied to the mirror, the mirror woken), one
  message per target, and the target set on the mirror's engine task (as the next
  step does: ``Session.engine_task``); no step.

Each side runs ``--targets`` targets per session (after a warm-up) inside
``functools.reduce``:

    CG_TOGGLE=1 PYTHONPATH=server valgrind --tool=callgrind --instr-atstart=no \\
        --toggle-collect=functools_reduce --callgrind-out-file=/tmp/target.cg \\
        python bench/target_pass.py 10 --side server

counts only the measured targets (``CG_TOGGLE`` switches the instrumentation on after
the warm-up; ``--side solver`` for the other side); divide the total by the targets
printed. Without valgrind it just runs.

    python bench/target_pass.py SESSIONS [--targets 200] [--side server|solver]
"""

from __future__ import annotations

import argparse
import functools
import math
import pickle
from multiprocessing import Pipe
from typing import Any

from callgrind import instrument
from posekit.api.routes_stream import target_applier
from posekit.robots import RobotRegistry
from posekit.sessions.loops.messages import Open, replay_of
from posekit.sessions.loops.solve_loop import StreamCounters
from posekit.sessions.loops.solver_link import SolverLink
from posekit.sessions.loops.solver_worker import MirrorHost
from posekit.sessions.manager import SessionManager
from posekit.sessions.session import Session

WARMUP = 20  # targets a session before the measured ones


class KeptBytes:
    """A stand-in for a :class:`PipeChannel`: keeps what would be written."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def send(self, payload: bytes) -> None:
        self.frames.append(payload)

    def wait_drained(self, timeout: float = 5.0) -> None:
        pass


class LinkLoop:
    """A solve loop that hands each change to a :class:`SolverLink`, as
    :class:`SolverProcesses` does (its process is not started)."""

    on_steps = None
    registry: RobotRegistry

    def __init__(self) -> None:
        self.epochs = iter(range(1, 1 << 30))
        self.link = SolverLink(self, 0)  # type: ignore[arg-type]
        self.channel = KeptBytes()
        self.link._channel = self.channel  # type: ignore[assignment]  # a stand-in

    def attach(self, session: Any) -> None:
        self.link.sessions[session.id] = session

    def changed(self, session: Any, change: Any) -> None:
        self.link.send(replay_of(session.id, session.revision, change))

    def encodings(self, session: Any, encodings: Any) -> None:
        pass

    def remove(self, session: Any) -> None:
        pass


def position(index: int, k: int, center: list[float]) -> list[float]:
    """The ``k``-th target of client ``index``: on a circle of 5 cm, as stream_pass."""
    angle = 0.3 * k + index
    x, y, z = center
    return [x + 0.05 * math.cos(angle), y + 0.05 * math.sin(angle), z]


def open_sessions(registry: RobotRegistry, count: int, loop: Any) -> list[Session]:
    manager = SessionManager(registry, solve_loop=loop)
    return [manager.create({"robot": "arm7"}) for _ in range(count)]


def server_side(sessions: list[Session], targets: int, measure: bool = True) -> None:
    appliers = []
    for session in sessions:
        refused: list[str] = []
        appliers.append(target_applier(session, None, refused.append))  # type: ignore[arg-type]
    centers = [list(s.task("ee").target.position) for s in sessions]  # type: ignore[union-attr]

    def one(k: int) -> None:
        for i, apply in enumerate(appliers):
            assert apply("ee", {"position": position(i, k, centers[i])}, k)

    for k in range(WARMUP):
        one(k)
    if measure:
        instrument()
    functools.reduce(lambda _, k: one(k), range(WARMUP, WARMUP + targets), None)


def solver_side(
    registry: RobotRegistry, opens: list[Open], frames: list[list[bytes]], targets: int
) -> None:
    _ours, theirs = Pipe(duplex=True)
    host = MirrorHost(theirs, registry)
    for message in opens:
        host.handle(message)
    loads, handle = pickle.loads, host.handle
    mirrors = [host.sessions[message.session_id] for message in opens]

    def one(k: int) -> None:
        for payload in frames[k]:
            handle(loads(payload))
        for mirror in mirrors:  # the target reaches the engine task, as a step's plan
            mirror.engine_task("ee")

    for k in range(WARMUP):
        one(k)
    instrument()
    functools.reduce(lambda _, k: one(k), range(WARMUP, WARMUP + targets), None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sessions", type=int)
    parser.add_argument("--targets", type=int, default=200)
    parser.add_argument("--side", choices=("server", "solver"), default="server")
    args = parser.parse_args()
    registry = RobotRegistry(menagerie=False)
    loop = LinkLoop()
    loop.registry = registry
    sessions = open_sessions(registry, args.sessions, loop)
    if args.side == "server":
        server_side(sessions, args.targets)
    else:
        # The frames of a server side run (one per target), on mirrors opened before it.
        counters = StreamCounters(0, 0, None, frozenset({"json"}))
        opens = [
            Open(s.id, i + 1, "arm7", s.entry, s.spec(), counters) for i, s in enumerate(sessions)
        ]
        loop.channel.frames.clear()
        server_side(sessions, args.targets, measure=False)
        frames = loop.channel.frames
        n = len(sessions)
        per_target = [frames[k * n : (k + 1) * n] for k in range(WARMUP + args.targets)]
        solver_side(registry, opens, per_target, args.targets)
    print(f"measured targets {args.sessions * args.targets} ({args.side})")


if __name__ == "__main__":
    main()
