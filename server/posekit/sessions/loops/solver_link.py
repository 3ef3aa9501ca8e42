"""One solver process seen from the server process: its pipe, the sessions it mirrors,
the states it sends (read on an event loop), and its replacement when it dies (the
mechanism is described in :mod:`posekit.sessions.loops.solver_processes`)."""

from __future__ import annotations

import asyncio
import logging
import math
import multiprocessing
import pickle
import threading
import time
from collections.abc import Callable, Iterator, Sequence
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
from posekit.sessions.loops.pipe_channel import PipeChannel
from posekit.sessions.loops.solve_loop import LoopSession, StreamCounters
from posekit.sessions.session_spec import SessionSpec
from posekit.sessions.subscription import SignalBatch

logger = logging.getLogger(__name__)
_CONTEXT = multiprocessing.get_context("spawn")  # forking a threaded server is unsafe
MAX_REOPENS = 3  # a mirror failing more often in a row has a reproducible cause
HEALTHY_S = 10.0  # [s] a solver process that lived this long did not "keep dying"
MAX_BACKOFF_S = 30.0
CONSUMED = Consumed()
_CONSUMED_PICKLE = pickle.dumps(CONSUMED, pickle.HIGHEST_PROTOCOL)  # once: ~8 µs to pickle


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
    on_steps: Callable[[Sequence[float]], None] | None

    @property
    def epochs(self) -> Iterator[int]:
        """Mirror epochs, unique across the owner's solver processes."""

    def new_process(self, name: str) -> Spawned: ...

    def link_ready(self) -> None: ...

    def remove(self, session: LoopSession) -> None: ...


class SolverLink:
    """One solver process: its pipe, the sessions it mirrors, and their states.

    Its pipe is read on ``loop`` (:meth:`start`): each :class:`States` batch is adopted
    there, and the watchers of that loop are woken without a thread hop. Whatever may
    block — waiting for a dead process, starting a new one, re-opening sessions (which
    takes their locks) — runs on a thread of its own, never on the loop.
    """

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
        self._channel: PipeChannel | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping = False
        self._started = -math.inf  # [s, monotonic] when the current process started
        self._quick_deaths = 0  # deaths in a row within HEALTHY_S of the process's start

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Take a solver process and read its pipe on ``loop`` (running now or soon, until
        :meth:`stop`)."""
        self._loop = loop
        self._spawn()

    def stop(self, timeout: float) -> None:
        """Ask the solver process to stop, then kill it after ``timeout`` seconds; meanwhile
        this thread writes and reads the pipe itself (the loop may be this thread), so
        that the process is not blocked writing states to a pipe nobody reads."""
        with self._life_lock:
            self._stopping = True
        self.send(Stop())
        channel, process = self._channel, self._process
        pumping = channel is not None and channel.detach(timeout)
        deadline = time.monotonic() + timeout
        if process is not None:
            while process.is_alive() and time.monotonic() < deadline:
                if pumping:  # it must not block writing states to nobody
                    channel.pump()  # type: ignore[union-attr]
                process.join(0.01)
            if process.is_alive():
                process.kill()
                process.join(timeout)
        if channel is not None and pumping:  # else the loop may still watch its socket
            channel.close()

    def _spawn(self) -> bool:
        """Take a (new) solver process — the spare when there is one; False when stopping."""
        with self._life_lock:
            if self._stopping:
                return False
            spawned = self._owner.new_process(self._name)
            assert self._loop is not None, "start() first"
            channel = PipeChannel(spawned.connection, self._loop, self._frame, self._ended)
            with self._send_lock:
                previous = self._channel
                self._process, self._channel = spawned.process, channel
                self._started = spawned.started
            channel.open()
        if previous is not None and previous.detach(1.0):
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
        """The mirror's spec; blocks, so never on the loop that reads the answer."""
        channel = self._channel
        if channel is not None and channel.on_loop_thread():
            raise RuntimeError("export() would block the event loop that reads its answer")
        future: Future[dict[str, Any] | None] = Future()
        self._exports[session_id] = future
        self.send(Export(session_id))
        return future.result(timeout)

    def send(self, message: ToSolver) -> None:
        """Send ``message``, after the ones sent before it.

        The :class:`Replay`, :data:`TargetMove` (a plain tuple) and :class:`Consumed`
        messages sent from an event loop (a client's targets, the watchers' credit) wait
        for the end of the loop's turn and go together, as one :class:`Batch`; any other
        message, or one sent from another thread, goes at once with the waiting ones.
        """
        batched = type(message) is tuple or isinstance(message, Replay | Consumed)
        try:
            loop = asyncio.get_running_loop() if batched else None
        except RuntimeError:
            loop = None
        with self._send_lock:
            self._outbox.append(message)
            if loop is None:
                self._flush_outbox()
            elif not self._flush_scheduled:
                self._flush_scheduled = True
                loop.call_soon(self._flush)
        channel = self._channel
        if loop is None and channel is not None:
            channel.wait_drained()  # a thread waits for a backlog, the loop never

    def _flush(self) -> None:
        with self._send_lock:
            self._flush_scheduled = False
            self._flush_outbox()

    def _flush_outbox(self) -> None:
        """Send the waiting messages (send lock held)."""
        outbox, self._outbox = self._outbox, []
        if self._channel is None or not outbox:
            return
        message = outbox[0] if len(outbox) == 1 else Batch(outbox)
        payload = (  # a lone credit (every batch of states): its pickle made once
            _CONSUMED_PICKLE
            if message is CONSUMED
            else pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
        )
        # Dropped when the process died: it is restarted and every session re-opened.
        self._channel.send(payload)

    # --------------------------------------------------------------- reading
    def _frame(self, payload: memoryview) -> None:
        """A message from the solver process (on the loop)."""
        try:
            message = pickle.loads(payload)
        except Exception:  # an unreadable message: the next one is still framed
            logger.exception("%s: could not read a message", self._name)
            return
        try:
            self._handle(message)
        except Exception:
            logger.exception("%s: could not handle %r", self._name, type(message).__name__)

    def _ended(self) -> None:
        """The pipe's end (on the loop): the solver process died, or it is stopping."""
        if not self._stopping:
            self._in_background(self._replace)

    def _replace(self) -> None:
        """Replace the dead solver process until that succeeds (or the link stops)."""
        while not self._stopping:
            try:
                restarted = self._restart()
                break
            except Exception:
                logger.exception("%s: could not restart; retrying in 1 s", self._name)
                time.sleep(1.0)
        else:
            return
        if restarted:
            self._reopen_all(list(self.sessions.values()))

    def _handle(self, message: FromSolver) -> None:
        if isinstance(message, States):
            batch = SignalBatch()
            solve_us = []
            sessions, epochs, reopens = self.sessions, self._epochs, self._reopens
            for session_id, epoch, state in message.states:
                session = sessions.get(session_id)
                if session is None or epochs.get(session_id) != epoch:
                    continue  # a closed session, or a mirror replaced since
                session.adopt(state, batch)
                if reopens:
                    reopens.pop(session_id, None)
                solve_us.append(state.solve_us)
            self.steps += len(solve_us)
            if self._owner.on_steps is not None:
                self._owner.on_steps(solve_us)
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
        self.send(CONSUMED)

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

    def _restart(self) -> bool:
        """Wait for the dead process and take a new one; False when stopping."""
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
            return False
        logger.error(
            "%s exited (code %s); restarted it, re-opening %d sessions",
            self._name,
            code,
            len(self.sessions),
        )
        self.restarts += 1
        return True

    def _reopen_all(self, sessions: list[LoopSession]) -> None:
        for robot in self._owner.registry.local_robots():  # changed while it restarted
            self.send(RobotChanged(robot.name, robot))
        for session in sessions:
            self.open(session)

    def _in_background(self, work: Callable[..., Any], *args: Any) -> None:
        """Run ``work`` on its own thread: it waits, takes session locks or sends, which
        the loop reading the pipe must never wait for."""
        threading.Thread(target=work, args=args, name=f"{self._name}-recovery", daemon=True).start()
