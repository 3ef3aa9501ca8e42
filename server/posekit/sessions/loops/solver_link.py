"""One solver process seen from the server process: its pipe, the sessions it mirrors,
the thread reading its states, and its replacement when it dies (the mechanism is
described in :mod:`posekit.sessions.loops.solver_processes`)."""

from __future__ import annotations

import asyncio
import logging
import math
import multiprocessing
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, NamedTuple, Protocol

from posekit.robots import RobotRegistry
from posekit.sessions.loops import solver_worker
from posekit.sessions.loops.messages import (
    Batch,
    Consumed,
    Diverged,
    Export,
    ExportedSpec,
    FromSolver,
    Open,
    Ready,
    Replay,
    RobotChanged,
    States,
    Stop,
    ToSolver,
)
from posekit.sessions.loops.solve_loop import LoopSession, StreamCounters
from posekit.sessions.session_spec import SessionSpec
from posekit.sessions.subscription import SignalBatch

logger = logging.getLogger(__name__)
_CONTEXT = multiprocessing.get_context("spawn")  # forking a threaded server is unsafe
MAX_REOPENS = 3  # a mirror failing more often in a row has a reproducible cause
HEALTHY_S = 10.0  # [s] a solver process that lived this long did not "keep dying"
MAX_BACKOFF_S = 30.0


class Spawned(NamedTuple):
    """A started solver process and our end of its pipe."""

    process: BaseProcess
    connection: Connection
    started: float  # [s, monotonic]


def spawn_solver(name: str, registry: RobotRegistry, capacity: float) -> Spawned:
    ours, theirs = _CONTEXT.Pipe(duplex=True)
    process = _CONTEXT.Process(
        target=solver_worker.main, args=(theirs, registry, capacity), name=name, daemon=True
    )
    process.start()
    theirs.close()
    return Spawned(process, ours, time.monotonic())


def end_solver(spawned: Spawned, timeout: float) -> None:
    """Stop a solver process (politely, then by force) and close its pipe."""
    try:
        spawned.connection.send(Stop())
    except OSError:
        pass
    spawned.process.join(timeout)
    if spawned.process.is_alive():
        spawned.process.kill()
        spawned.process.join(timeout)
    spawned.connection.close()


class LinkOwner(Protocol):
    """What a :class:`SolverLink` needs from the loop that owns it."""

    registry: RobotRegistry
    on_step: Callable[[float], None] | None

    @property
    def epochs(self) -> Iterator[int]:
        """Mirror epochs, unique across the owner's solver processes."""

    def new_process(self, name: str) -> Spawned: ...

    def link_ready(self) -> None: ...

    def remove(self, session: LoopSession) -> None: ...


class SolverLink:
    """One solver process: its pipe, the sessions it mirrors and the thread reading it."""

    def __init__(self, owner: LinkOwner, index: int) -> None:
        self._owner = owner
        self._name = f"posekit-solver-{index}"
        self.sessions: dict[str, LoopSession] = {}
        self.steps = 0
        self.restarts = 0
        self.ready = False  # its first process said it is warm
        self.failures = 0  # mirrors that failed (and were re-opened or given up)
        self._epochs: dict[str, int] = {}  # session id → epoch of its current mirror
        self._reopens: dict[str, int] = {}  # session id → re-opens since its last state
        self._exports: dict[str, Future[dict[str, Any] | None]] = {}
        self._send_lock = threading.Lock()
        self._outbox: list[ToSolver] = []  # this event-loop turn's messages, in order
        self._flush_scheduled = False
        self._life_lock = threading.Lock()  # spawning vs. stopping
        self._process: BaseProcess | None = None
        self._connection: Connection | None = None
        self._stopping = False
        self._reader: threading.Thread | None = None
        self._started = -math.inf  # [s, monotonic] when the current process started
        self._quick_deaths = 0  # deaths in a row within HEALTHY_S of the process's start

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self) -> None:
        self._spawn()
        self._reader = threading.Thread(target=self._read, name=f"{self._name}-reader", daemon=True)
        self._reader.start()

    def stop(self, timeout: float) -> None:
        with self._life_lock:
            self._stopping = True
        self.send(Stop())
        process = self._process
        if process is not None:
            process.join(timeout)
            if process.is_alive():
                process.kill()
                process.join(timeout)
        if self._connection is not None:
            self._connection.close()
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(timeout)

    def _spawn(self) -> bool:
        """Take a (new) solver process — the spare when there is one; False when stopping."""
        with self._life_lock:
            if self._stopping:
                return False
            spawned = self._owner.new_process(self._name)
            with self._send_lock:
                previous = self._connection
                self._process, self._connection = spawned.process, spawned.connection
                self._started = spawned.started
        if previous is not None:
            previous.close()
        return True

    # --------------------------------------------------------------- sending
    def open(self, session: LoopSession) -> None:
        """(Re)build the session's mirror from its spec; the session lock orders it
        before the session's later changes."""

        def send(spec: SessionSpec, counters: StreamCounters) -> None:
            epoch = next(self._owner.epochs)
            self._epochs[session.id] = epoch
            self.send(Open(session.id, epoch, session.robot, session.entry, spec, counters))

        session.open_mirror(send)  # nothing when it was removed meanwhile (no mirror)

    def forget(self, session_id: str) -> None:
        self.sessions.pop(session_id, None)
        self._epochs.pop(session_id, None)
        self._reopens.pop(session_id, None)

    def export(self, session_id: str, timeout: float) -> dict[str, Any] | None:
        future: Future[dict[str, Any] | None] = Future()
        self._exports[session_id] = future
        self.send(Export(session_id))
        return future.result(timeout)

    def send(self, message: ToSolver) -> None:
        """Send ``message``, after the ones sent before it.

        The :class:`Replay` and :class:`Consumed` messages sent from an event loop (a
        client's targets, the watchers' credit) wait for the end of the loop's turn and
        go together, as one :class:`Batch`; any other message, or one sent from another
        thread, goes at once with the waiting ones.
        """
        try:
            loop = asyncio.get_running_loop() if isinstance(message, Replay | Consumed) else None
        except RuntimeError:
            loop = None
        with self._send_lock:
            self._outbox.append(message)
            if loop is None:
                self._flush_outbox()
            elif not self._flush_scheduled:
                self._flush_scheduled = True
                loop.call_soon(self._flush)

    def _flush(self) -> None:
        with self._send_lock:
            self._flush_scheduled = False
            self._flush_outbox()

    def _flush_outbox(self) -> None:
        """Send the waiting messages (send lock held)."""
        outbox, self._outbox = self._outbox, []
        if self._connection is None or not outbox:
            return
        try:
            self._connection.send(outbox[0] if len(outbox) == 1 else Batch(outbox))
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
            except Exception:  # an unreadable message: the next one is still framed
                logger.exception("%s: could not read a message", self._name)
                continue
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
                logger.exception("%s: could not handle %r", self._name, type(message).__name__)

    def _handle(self, message: FromSolver) -> None:
        if isinstance(message, States):
            batch = SignalBatch()
            for solved in message.states:
                session = self.sessions.get(solved.session_id)
                if session is None or self._epochs.get(solved.session_id) != solved.epoch:
                    continue  # a closed session, or a mirror replaced since
                session.adopt(solved.state, batch)
                self._reopens.pop(solved.session_id, None)
                self.steps += 1
                if self._owner.on_step is not None:
                    self._owner.on_step(solved.state.solve_us)
            batch.flush(then=self._consumed)  # the solver process's credit back
        elif isinstance(message, Diverged):
            failed = self.sessions.get(message.session_id)
            if failed is not None:
                self.failures += 1
                self._in_background(self._recover, failed, message.reason)
        elif isinstance(message, Ready):
            if not self.ready:
                self.ready = True
                self._owner.link_ready()
        elif isinstance(message, ExportedSpec):
            future = self._exports.pop(message.session_id, None)
            if future is not None:
                future.set_result(message.spec)

    def _consumed(self) -> None:
        self.send(Consumed())

    def _recover(self, session: LoopSession, reason: str) -> None:
        """Re-open a failed mirror, or give the session up after ``MAX_REOPENS``."""
        reopens = self._reopens[session.id] = self._reopens.get(session.id, 0) + 1
        if reopens > MAX_REOPENS:
            logger.error("%s: session %s cannot be mirrored (%s)", self._name, session.id, reason)
            self._owner.remove(session)
            session.fail(f"the solver process cannot solve this session: {reason}")
            return
        logger.error(
            "%s: mirror of session %s failed (%s); re-opening it", self._name, session.id, reason
        )
        self.open(session)

    def _restart(self) -> None:
        process = self._process
        if process is not None:
            process.join(1.0)
            if process.is_alive():  # the pipe broke but the process lives on
                process.kill()
                process.join(1.0)
        lived = time.monotonic() - self._started
        self._quick_deaths = self._quick_deaths + 1 if lived < HEALTHY_S else 0
        if self._quick_deaths > 1:  # it keeps dying: back off (1, 2, 4 … 30 s)
            time.sleep(min(MAX_BACKOFF_S, 2.0 ** (self._quick_deaths - 2)))
        code = process.exitcode if process is not None else None
        if not self._spawn():
            return
        logger.error(
            "%s exited (code %s); restarted it, re-opening %d sessions",
            self._name,
            code,
            len(self.sessions),
        )
        self.restarts += 1
        sessions = list(self.sessions.values())
        self._in_background(self._reopen_all, sessions)

    def _reopen_all(self, sessions: list[LoopSession]) -> None:
        for robot in self._owner.registry.local_robots():  # changed while it restarted
            self.send(RobotChanged(robot.name, robot))
        for session in sessions:
            self.open(session)

    def _in_background(self, work: Callable[..., Any], *args: Any) -> None:
        """Run ``work`` on its own thread: it takes session locks and sends, which the
        reader must never wait for."""
        threading.Thread(target=work, args=args, name=f"{self._name}-recovery", daemon=True).start()
