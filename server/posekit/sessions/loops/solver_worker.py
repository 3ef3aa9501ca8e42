"""The body of a solver process: mirrors of sessions, stepped by a :class:`Scheduler`.

Started by :class:`~posekit.sessions.loops.solver_processes.SolverProcesses` (``spawn``)
with the server's robot registry, it reads :mod:`~posekit.sessions.loops.messages` from
its pipe:

- :class:`Open`: build a mirror of a session from its portable spec and continue its
  counters (revision, seq, ref); an open mirror is replaced. The epoch tags the
  mirror's states, so that states of a replaced mirror are recognised as stale.
- :class:`Replay`: apply an accepted change; :data:`TargetMove`: a moved target (the
  hot change, a plain tuple), taken as the session made it canonical.
- :class:`Export`: answer :class:`ExportedSpec`.
- :class:`RobotChanged`: a robot from files was added, removed or changed on disk; the
  registry follows and forgets its compiled models.
- :class:`Close`, :class:`Stop`.
- :class:`Batch`: several of the above, in order.

and sends :class:`States` after each scheduler pass (each state's JSON already
encoded; as :class:`StateRows`) and :class:`Diverged` when a mirror cannot be built or a replayed change
fails, so that the server process re-opens the mirror from its spec.

One thread reads the pipe and steps the mirrors (no thread switches, no lock
contention). Robot models are compiled on a loader thread (MuJoCo releases the GIL
while compiling), so the first session on a large model does not stall the others; the
messages of a session whose model is loading wait, in order, until it is ready.
"""

from __future__ import annotations

import logging
import math
import os
import pickle
import queue
import select
import signal
import threading
import time
from multiprocessing.connection import Connection
from typing import cast

import mujoco

from posekit.collector import tune_collector
from posekit.memory import limit_malloc_arenas
from posekit.robots import RobotRegistry
from posekit.sessions.loops.batch_credit import BatchCredit
from posekit.sessions.loops.messages import (
    Batch,
    Close,
    Consumed,
    Diverged,
    Encode,
    Export,
    ExportedSpec,
    FromSolver,
    NamedToSolver,
    Open,
    Ready,
    Replay,
    RobotChanged,
    StateRows,
    Stop,
    TargetMove,
    ToSolver,
)
from posekit.sessions.loops.scheduler import Scheduler
from posekit.sessions.loops.solve_loop import LoopSession
from posekit.sessions.session import Session
from posekit.warmup import compile_kernels

logger = logging.getLogger(__name__)

MAX_MESSAGES_PER_PASS = 256  # a flood of messages cannot starve the solving
EXPIRE_INTERVAL_S = 1.0  # [s] between two releases of the models no mirror uses
_ModelKey = tuple[str, str]  # (robot, entry)


class MirrorHost:
    """The mirrors of one solver process and the pipe they answer on."""

    def __init__(
        self, connection: Connection, registry: RobotRegistry, capacity: float = math.inf
    ) -> None:
        self._connection = connection
        self._registry = registry
        self.sessions: dict[str, Session] = {}
        self._epochs: dict[str, int] = {}
        self.scheduler = Scheduler(
            name="posekit-solver-process", capacity=capacity, extra_steps=True
        )
        self.scheduler.on_pass = self._publish
        self.credit = BatchCredit()
        # Sessions waiting for their model: their messages, in arrival order.
        self._waiting: dict[str, tuple[_ModelKey, list[ToSolver]]] = {}
        self._loading: set[_ModelKey] = set()
        self._loaded: queue.SimpleQueue[tuple[_ModelKey, mujoco.MjModel | Exception]] = (
            queue.SimpleQueue()
        )
        self._wake_read, self._wake_write = os.pipe()
        self._to_load: queue.SimpleQueue[_ModelKey] = queue.SimpleQueue()
        threading.Thread(target=self._loader, name="posekit-model-loader", daemon=True).start()
        self._next_expiry = 0.0

    def serve(self) -> None:
        """Apply messages and step the mirrors until ``stop`` or until the server
        process goes away. Messages go first (at most ``MAX_MESSAGES_PER_PASS``): a
        change is replayed before the next pass, so that pass already answers it."""
        # Pollers made once: Connection.poll() builds a selector on every call.
        incoming = select.poll()
        incoming.register(self._connection.fileno(), select.POLLIN)
        readable = select.poll()  # a message or a loaded model
        readable.register(self._connection.fileno(), select.POLLIN)
        readable.register(self._wake_read, select.POLLIN)
        try:
            while True:
                self._take_loaded_models()
                handled = 0
                while handled < MAX_MESSAGES_PER_PASS and incoming.poll(0):
                    received = self._connection.recv()
                    batch = received.messages if isinstance(received, Batch) else (received,)
                    for message in batch:
                        if isinstance(message, Stop):
                            return
                        try:
                            self.handle(message)
                        except Exception:  # one bad message must not stop every mirror
                            logger.exception("solver process: could not handle %r", message)
                    handled += len(batch)
                held = self.credit.wait_s()  # the server process is behind: wait for it
                delay = self.scheduler.step_due() if held == 0.0 else held
                if held:
                    self.credit.waited += 1
                self._expire_models()
                if handled == MAX_MESSAGES_PER_PASS:
                    continue
                wait = EXPIRE_INTERVAL_S if delay is None else min(delay, EXPIRE_INTERVAL_S)
                if wait > 0.0:
                    readable.poll(math.ceil(wait * 1e3))  # [ms]: until a message or a step
        except (EOFError, OSError):
            return
        finally:
            for session in self.sessions.values():
                session.close("solver process stopping")

    def handle(self, message: ToSolver) -> None:
        if type(message) is tuple:  # a TargetMove, the hot one: the only plain tuple
            # Replayed here, not in a method of its own: a Python call costs about 1k
            # instructions, a 20th of a target's replay (and cast() is one more).
            moved: TargetMove = message  # type: ignore[assignment]
            session_id, revision, task, model, values, ref = moved
            mirror = self.sessions.get(session_id)
            if mirror is None:
                self._move_target_later(moved)
                return
            try:
                mirror.replay_target(task, model, values, ref, revision)
            except Exception as exc:
                logger.exception("solver process: a target move on %s failed", session_id)
                self._close(session_id)
                self.send(Diverged(session_id, f"MoveTarget failed: {exc}"))
            return
        named = cast(NamedToSolver, message)
        if isinstance(named, Stop):
            return
        if isinstance(named, Consumed):
            self.credit.answered()
            return
        if isinstance(named, RobotChanged):
            self._registry.apply_change(named.name, named.robot)
            return
        waiting = self._waiting.get(named.session_id)
        if waiting is not None:
            waiting[1].append(named)  # after the open that waits for its model
        elif isinstance(named, Open):
            self._open(named)
        elif isinstance(named, Replay):
            self._replay(named)
        elif isinstance(named, Encode):
            mirror = self.sessions.get(named.session_id)
            if mirror is not None:
                mirror.encodings = named.encodings
        elif isinstance(named, Export):
            mirror = self.sessions.get(named.session_id)
            spec = mirror.spec().model_dump(mode="json") if mirror is not None else None
            self.send(ExportedSpec(named.session_id, spec))
        elif isinstance(named, Close):
            self._close(named.session_id)

    def _expire_models(self) -> None:
        """Release the models no mirror uses any more (at most once a second)."""
        now = time.monotonic()
        if now >= self._next_expiry:
            self._next_expiry = now + EXPIRE_INTERVAL_S
            self._registry.expire()

    # -------------------------------------------------------------- mirrors
    def _open(self, message: Open) -> None:
        session_id = message.session_id
        self._close(session_id)
        key = (message.robot, message.entry)
        try:
            loaded = self._registry.is_loaded(*key)
        except Exception as exc:  # e.g. a robot this registry does not know
            self.send(Diverged(session_id, f"open failed: {exc}"))
            return
        if not loaded:
            self._waiting[session_id] = (key, [message])
            if key not in self._loading:
                self._loading.add(key)
                self._to_load.put(key)
            return
        try:
            model = self._registry.model(*key)
            mirror = Session(
                session_id, message.spec, model, message.entry, scheduler=self.scheduler
            )
        except Exception as exc:
            logger.exception("solver process: could not open session %s", session_id)
            self.send(Diverged(session_id, f"open failed: {exc}"))
            return
        mirror.continue_from(message.counters)
        self.sessions[session_id] = mirror
        self._epochs[session_id] = message.epoch
        self.scheduler.attach(mirror)

    def _close(self, session_id: str) -> None:
        self._epochs.pop(session_id, None)
        mirror = self.sessions.pop(session_id, None)
        if mirror is not None:
            mirror.close()

    def _replay(self, message: Replay) -> None:
        mirror = self.sessions.get(message.session_id)
        if mirror is None:
            return  # not opened yet (its open carries this change) or its open failed
        try:
            mirror.replay(message.change, message.revision)
        except Exception as exc:
            name = type(message.change).__name__
            logger.exception("solver process: %s on %s failed", name, message.session_id)
            self._close(message.session_id)
            self.send(Diverged(message.session_id, f"{name} failed: {exc}"))

    def _move_target_later(self, message: TargetMove) -> None:
        """A target move for a session without a mirror: kept after the open that waits
        for its model, else dropped (not opened yet: its open carries this change; or
        its open failed)."""
        waiting = self._waiting.get(message[0])  # a waiting session has no mirror yet
        if waiting is not None:
            waiting[1].append(message)

    # --------------------------------------------------------------- models
    def _loader(self) -> None:
        """Compile the models asked for, one at a time, and hand them to the main loop
        (one long-lived thread: its allocations stay in one malloc arena)."""
        while True:
            key = self._to_load.get()
            try:
                result: mujoco.MjModel | Exception = self._registry.model(*key)
            except Exception as exc:
                result = exc
            self._loaded.put((key, result))
            del result  # the main loop's mirrors hold the model, not this thread
            os.write(self._wake_write, b"\0")

    def _take_loaded_models(self) -> None:
        """Replay the messages of the sessions whose model finished loading."""
        while not self._loaded.empty():
            key, result = self._loaded.get()
            os.read(self._wake_read, 1)
            self._loading.discard(key)
            ready = [sid for sid, (waiting_key, _) in self._waiting.items() if waiting_key == key]
            for session_id in ready:
                _, messages = self._waiting.pop(session_id)
                if isinstance(result, Exception):
                    self.send(Diverged(session_id, f"open failed: {result}"))
                    continue
                for message in messages:
                    self.handle(message)

    # ---------------------------------------------------------------- output
    def _publish(self, stepped: list[LoopSession]) -> None:
        """Send the states of a pass's open mirrors (or of its part published early),
        encoded for their watchers, as the rows the server process unpickles into
        :class:`States`."""
        rows = []
        sessions, epochs = self.sessions, self._epochs
        for stepped_session in stepped:
            session_id = stepped_session.id
            mirror, epoch = sessions.get(session_id), epochs.get(session_id)
            if mirror is not None and epoch is not None and not mirror.closed:
                state = mirror.state
                state.encode(mirror.encodings)  # once, here, for all its watchers
                rows.append((session_id, epoch, state.wire()))
        if rows:
            self.send(StateRows(rows))
            self.credit.sent()

    def send(self, message: FromSolver) -> None:
        """Send ``message`` to the server process (its reader unpickles it with ``recv``).

        Plain :func:`pickle.dumps` rather than ``Connection.send``'s ForkingPickler,
        which builds a pickler and a dispatch table per message: no message needs its
        reducers (descriptors, connections).
        """
        try:
            self._connection.send_bytes(pickle.dumps(message, pickle.HIGHEST_PROTOCOL))
        except OSError:
            pass  # the server process is gone; serve() ends on its next receive


def main(connection: Connection, registry: RobotRegistry, capacity: float = math.inf) -> None:
    """Entry point of a solver process (``capacity``: its scheduler's fair share)."""
    limit_malloc_arenas()
    tune_collector()
    # Ctrl-C, `timeout` and systemd signal the whole process group (or cgroup): the
    # server process stops this one itself (a Stop message, then SIGKILL), and without
    # it this one ends on its pipe's EOF; dying first would only be restarted.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    logging.basicConfig(level=logging.WARNING, format="%(processName)s %(levelname)s %(message)s")
    compile_kernels()  # before the first session, not during its first steps
    host = MirrorHost(connection, registry, capacity)
    host.send(Ready())
    host.serve()
