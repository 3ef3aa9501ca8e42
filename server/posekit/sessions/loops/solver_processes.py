"""LoopSessions solved in separate processes, so that solving and serving use separate cores.

A single Python process serves websockets and solves IK under one GIL: on a 2-core
machine it saturates one core while the other idles. :class:`SolverProcesses` is a
:class:`~posekit.sessions.loops.solve_loop.SolveLoop` that keeps each session's solving
in one of N solver processes (:mod:`posekit.sessions.loops.solver_worker`):

- the server process keeps the authoritative :class:`LoopSession` (specs, validation,
  names, subscribers); each accepted change is sent as a typed change value, in order
  (changes and opens are sent under the session's lock);
- the solver process holds a *mirror* of the session, built from its portable spec
  with the same robot registry, applies the changes and steps it with its own
  :class:`Scheduler`;
- the solved states come back in one message per pass, tagged with the mirror's epoch
  (states of a replaced mirror are dropped), and are published by
  :meth:`Session.adopt` (their JSON already encoded by the solver process).

A solver process that dies is replaced at once by a *spare*: a solver process started
ahead of need, its imports done and its kernels compiled, so states flow again within a
fraction of a second; its sessions are re-opened from their specs and a new spare is
started. Only a process that keeps dying (again and again within ``HEALTHY_S`` of its
start) is replaced with a growing delay; a mirror that fails (a bug: every change was
validated before) is re-opened, at most ``MAX_REOPENS`` times in a row; beyond, the
session reports ``failed`` and is no longer solved. Re-opening runs on its own thread:
the reader of a pipe never waits for a send, so the two pipes cannot both fill up.
"""

from __future__ import annotations

import asyncio
import atexit
import itertools
import math
import threading
from collections.abc import Callable, Sequence
from typing import Any

from posekit.robots import RobotRegistry
from posekit.robots.local_robots import LocalRobot
from posekit.sessions.changes import Change, ReloadModel
from posekit.sessions.loops.event_loop_thread import EventLoopThread
from posekit.sessions.loops.messages import (
    Close,
    Encode,
    RobotChanged,
    replay_of,
)
from posekit.sessions.loops.solve_loop import LoopSession
from posekit.sessions.loops.solver_link import SolverLink, Spawned, end_solver, spawn_solver


class SolverProcesses:
    """Steps sessions in ``processes`` solver processes (each session in one of them).

    Args:
        processes: Number of solver processes (>= 1).
        registry: Where the sessions' robots come from: pass the manager's registry
            (solver processes build the same one and compile the models themselves).
        capacity: Each solver process's fair-share capacity (see
            :class:`~posekit.sessions.loops.scheduler.Scheduler`).

    New sessions go to the process with the fewest sessions.
    """

    def __init__(
        self,
        processes: int = 1,
        registry: RobotRegistry | None = None,
        capacity: float = math.inf,
    ) -> None:
        if processes < 1:
            raise ValueError(f"processes must be >= 1, got {processes}")
        self._count = processes
        self.capacity = capacity
        self.registry = registry if registry is not None else RobotRegistry()
        self._links: list[SolverLink] = []
        self._link_of: dict[str, SolverLink] = {}
        self._lock = threading.Lock()
        self._spare: Spawned | None = None
        self._spare_lock = threading.Lock()  # held while a spare is being started
        self._stopped = False
        self._io: EventLoopThread | None = None  # reads the pipes when no loop ran at start
        self.epochs = itertools.count(1)
        """Mirror epochs, unique across the solver processes."""
        self.on_steps: Callable[[Sequence[float]], None] | None = None
        self.registry.on_change(self._robot_changed)

    # --------------------------------------------------------------- control
    def start(self) -> None:
        """Start the solver processes (idempotent); their pipes are read on the running
        event loop, or on a loop of their own when none runs."""
        with self._lock:
            if self._links:
                return
            self._stopped = False
            self._links = [SolverLink(self, index) for index in range(self._count)]
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._io = EventLoopThread("posekit-solver-pipes")
            loop = self._io.loop
        for link in self._links:
            link.start(loop)
        atexit.register(self.stop)  # before multiprocessing's exit hook kills them

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the solver processes and wait for them."""
        with self._lock:
            links, self._links = self._links, []
            self._link_of.clear()
            self._stopped = True
        for link in links:
            link.stop(timeout)
        io, self._io = self._io, None
        if io is not None:
            io.stop(timeout)
        with self._spare_lock:
            spare, self._spare = self._spare, None
        if spare is not None:
            end_solver(spare, timeout)
        atexit.unregister(self.stop)

    @property
    def steps(self) -> int:
        """Solved states received since start."""
        return sum(link.steps for link in self._links)

    @property
    def restarts(self) -> int:
        """Solver processes restarted after they died."""
        return sum(link.restarts for link in self._links)

    def pids(self) -> list[int | None]:
        """Process ids of the solver processes (diagnostics and tests)."""
        return [link.pid for link in self._links]

    def spare_pid(self) -> int | None:
        """Process id of the spare solver process, once it is started."""
        spare = self._spare
        return spare.process.pid if spare is not None else None

    def new_process(self, name: str) -> Spawned:
        """A solver process for a link: the spare when there is a live one (and a new
        spare is started in the background), else one started now."""
        with self._spare_lock:
            spare, self._spare = self._spare, None
        if spare is not None and spare.process.is_alive():
            threading.Thread(target=self._refill_spare, name="posekit-spare", daemon=True).start()
            return spare
        if spare is not None:
            spare.connection.close()
        return spawn_solver(name, self.registry, self.capacity)

    def link_ready(self) -> None:
        """A link's solver process is warm: once all are, start the spare (starting it
        sooner would slow theirs down)."""
        if all(link.ready for link in self._links):
            threading.Thread(target=self._refill_spare, name="posekit-spare", daemon=True).start()

    def _refill_spare(self) -> None:
        """Start a spare solver process unless there is one (or the loop stopped)."""
        with self._spare_lock:
            if self._spare is None and not self._stopped:
                self._spare = spawn_solver("posekit-solver-spare", self.registry, self.capacity)

    def mirror_spec(self, session: LoopSession, timeout: float = 10.0) -> dict[str, Any] | None:
        """The portable spec (JSON) of the session's mirror, as its solver process sees
        it (None when it has no mirror); for diagnostics and tests."""
        link = self._link_of.get(session.id)
        return link.export(session.id, timeout) if link is not None else None

    # ------------------------------------------------------------- SolveLoop
    def attach(self, session: LoopSession) -> None:
        with self._lock:
            if not self._links:
                raise RuntimeError("the solver processes are not running; call start() first")
            if session.closed:  # deleted while it was being created
                return
            link = min(self._links, key=lambda candidate: len(candidate.sessions))
            link.sessions[session.id] = session
            self._link_of[session.id] = link
        link.open(session)

    def changed(self, session: LoopSession, change: Change) -> None:
        link = self._link_of.get(session.id)
        if link is None:
            return
        if isinstance(change, ReloadModel):
            link.open(session)  # rebuilt on the new model (its registry was told first)
        else:
            link.send(replay_of(session.id, session.revision, change))

    def _robot_changed(self, name: str, robot: LocalRobot | None) -> None:
        """A robot from files changed in the registry: every solver process's follows."""
        for link in list(self._links):
            link.send(RobotChanged(name, robot))

    def encodings(self, session: LoopSession, encodings: frozenset[str]) -> None:
        link = self._link_of.get(session.id)
        if link is not None:
            link.send(Encode(session.id, encodings))

    def remove(self, session: LoopSession) -> None:
        with self._lock:
            link = self._link_of.pop(session.id, None)
            if link is not None:
                link.forget(session.id)
        if link is not None:
            link.send(Close(session.id))
