"""Sessions solved in separate processes, so that solving and serving use separate cores.

A single Python process serves websockets and solves IK under one GIL: on a 2-core
machine it saturates one core while the other idles. :class:`SolverProcesses` is a
:class:`~posekit.sessions.solve_loop.SolveLoop` that keeps each session's solving in
one of N solver processes (:mod:`posekit.sessions.solver_worker`):

- the API process keeps the authoritative :class:`Session` (specs, validation, names,
  subscribers); each accepted change is sent as a replayable call;
- the solver process holds a *mirror* of the session (built from its portable spec),
  replays the calls in order and steps it with its own :class:`Scheduler`;
- the solved states come back in one message per pass and are published by
  :meth:`Session._adopt` (their JSON already encoded by the solver process).

A solver process that dies is restarted and its sessions re-opened from their specs;
a replayed change that fails (a bug: it was validated before) re-opens that mirror.
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

import mujoco

from posekit.sessions import solver_worker
from posekit.sessions.subscription import SignalBatch

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

    from posekit.sessions.session import Session
    from posekit.sessions.solve_loop import Call

logger = logging.getLogger(__name__)
_CONTEXT = multiprocessing.get_context("spawn")  # forking a threaded server is unsafe


class SolverProcesses:
    """Steps sessions in ``processes`` solver processes (each session in one of them).

    New sessions go to the process with the fewest sessions.
    """

    def __init__(self, processes: int = 1) -> None:
        if processes < 1:
            raise ValueError(f"processes must be >= 1, got {processes}")
        self._count = processes
        self._links: list[_SolverLink] = []
        self._link_of: dict[str, _SolverLink] = {}
        self._lock = threading.Lock()
        self.steps = 0
        self.restarts = 0
        self.on_step: Callable[[float], None] | None = None

    # --------------------------------------------------------------- control
    def start(self) -> None:
        """Start the solver processes (idempotent)."""
        with self._lock:
            if self._links:
                return
            self._links = [_SolverLink(self, index) for index in range(self._count)]
        for link in self._links:
            link.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the solver processes and wait for them."""
        with self._lock:
            links, self._links = self._links, []
            self._link_of.clear()
        for link in links:
            link.stop(timeout)

    @property
    def running(self) -> bool:
        return bool(self._links)

    def pids(self) -> list[int | None]:
        """Process ids of the solver processes (diagnostics and tests)."""
        return [link.pid for link in self._links]

    # ------------------------------------------------------------- SolveLoop
    def attach(self, session: Session) -> None:
        with self._lock:
            if not self._links:
                raise RuntimeError("the solver processes are not running; call start() first")
            link = min(self._links, key=lambda candidate: len(candidate.sessions))
            link.sessions[session.id] = session
            self._link_of[session.id] = link
        link.open(session)

    def changed(self, session: Session, call: Call) -> None:
        link = self._link_of.get(session.id)
        if link is not None:
            method, args = call
            link.send(("call", session.id, session.revision, method, args))

    def remove(self, session: Session) -> None:
        with self._lock:
            link = self._link_of.pop(session.id, None)
            if link is not None:
                link.sessions.pop(session.id, None)
        if link is not None:
            link.send(("close", session.id))

    def _count_step(self, solve_us: float) -> None:
        self.steps += 1
        if self.on_step is not None:
            self.on_step(solve_us)


class _SolverLink:
    """One solver process: its pipe, the sessions it mirrors and the thread reading it."""

    def __init__(self, owner: SolverProcesses, index: int) -> None:
        self._owner = owner
        self._name = f"posekit-solver-{index}"
        self.sessions: dict[str, Session] = {}
        self._send_lock = threading.Lock()
        self._models: dict[int, mujoco.MjModel] = {}  # sent to this process incarnation
        self._process: BaseProcess | None = None
        self._connection: Connection | None = None
        self._stopping = False
        self._reader: threading.Thread | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self) -> None:
        self._spawn()
        self._reader = threading.Thread(target=self._read, name=f"{self._name}-reader", daemon=True)
        self._reader.start()

    def stop(self, timeout: float) -> None:
        self._stopping = True
        self.send(("stop",))
        if self._process is not None:
            self._process.join(timeout)
            if self._process.is_alive():
                self._process.terminate()
                self._process.join(timeout)
        if self._connection is not None:
            self._connection.close()
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(timeout)

    def _spawn(self) -> None:
        ours, theirs = _CONTEXT.Pipe(duplex=True)
        process = _CONTEXT.Process(
            target=solver_worker.main, args=(theirs,), name=self._name, daemon=True
        )
        process.start()
        theirs.close()
        with self._send_lock:
            previous = self._connection
            self._process, self._connection = process, ours
            self._models = {}
        if previous is not None:
            previous.close()

    # --------------------------------------------------------------- sending
    def open(self, session: Session) -> None:
        """(Re)build the session's mirror from its spec; the session lock orders it
        before the session's later changes."""
        with session._lock:
            spec = session.spec()
            counters = session._mirror_counters()
            with self._send_lock:
                model = session.model
                fresh = id(model) not in self._models
                self._models[id(model)] = model
                message = (
                    "open",
                    session.id,
                    id(model),
                    model if fresh else None,
                    spec,
                    session.entry,
                    counters,
                )
                self._send_locked(message)

    def send(self, message: tuple[Any, ...]) -> None:
        with self._send_lock:
            self._send_locked(message)

    def _send_locked(self, message: tuple[Any, ...]) -> None:
        if self._connection is None:
            return
        try:
            self._connection.send(message)
        except OSError:
            pass  # the process died: the reader restarts it and re-opens every session

    # --------------------------------------------------------------- reading
    def _read(self) -> None:
        while True:
            connection = self._connection
            try:
                message = connection.recv() if connection is not None else None
            except (EOFError, OSError):
                message = None
            if message is None:
                if self._stopping:
                    return
                try:
                    self._restart()
                except Exception:
                    logger.exception("%s: could not restart; retrying in 1 s", self._name)
                    time.sleep(1.0)
                continue
            try:
                self._handle(message)
            except Exception:
                logger.exception("%s: could not handle %r", self._name, message[0])

    def _handle(self, message: tuple[Any, ...]) -> None:
        if message[0] == "states":
            batch = SignalBatch()
            for session_id, state in message[1]:
                session = self.sessions.get(session_id)
                if session is not None:
                    session._adopt(state, batch)
                self._owner._count_step(state.solve_us)
            batch.flush()
        elif message[0] == "diverged":
            _, session_id, reason = message
            logger.error(
                "%s: mirror of session %s diverged (%s); re-opening it",
                self._name,
                session_id,
                reason,
            )
            session = self.sessions.get(session_id)
            if session is not None:
                self.open(session)

    def _restart(self) -> None:
        code = None
        if self._process is not None:
            self._process.join(1.0)
            code = self._process.exitcode
        logger.error(
            "%s exited (code %s); restarting it and re-opening %d sessions",
            self._name,
            code,
            len(self.sessions),
        )
        self._spawn()
        for session in list(self.sessions.values()):
            self.open(session)
        self._owner.restarts += 1
