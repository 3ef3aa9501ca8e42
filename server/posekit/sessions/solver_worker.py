"""The body of a solver process: mirrors of sessions, stepped by a :class:`Scheduler`.

Started by :class:`~posekit.sessions.solver_processes.SolverProcesses` (``spawn``) with
the server's robot registry, it reads messages from its pipe:

- ``("open", session_id, epoch, robot, entry, spec, counters)``: build a mirror of a
  session from its portable spec and continue its counters (revision, seq, ref); an
  open mirror is replaced. The epoch tags the mirror's states, so that states of a
  replaced mirror are recognised as stale.
- ``("call", session_id, revision, method, args)``: replay an accepted change.
- ``("export", session_id)``: answer ``("spec", session_id, spec | None)``.
- ``("close", session_id)``, ``("stop",)``.

and sends ``("states", [(session_id, epoch, state), …])`` after each scheduler pass
(each state's JSON already encoded) and ``("diverged", session_id, reason)`` when a
mirror cannot be built or a replayed change fails, so that the server process re-opens
the mirror from its spec.

One thread reads the pipe and steps the mirrors (no thread switches, no lock
contention). Robot models are compiled on a loader thread (MuJoCo releases the GIL
while compiling), so the first session on a large model does not stall the others; the
messages of a session whose model is loading wait, in order, until it is ready.
"""

from __future__ import annotations

import logging
import math
import os
import queue
import select
import signal
import threading
from multiprocessing.connection import Connection
from typing import Any

import mujoco

from posekit.robots import RobotRegistry
from posekit.sessions.scheduler import Scheduler
from posekit.sessions.session import Session
from posekit.sessions.solve_loop import REPLAYABLE

logger = logging.getLogger(__name__)

MAX_MESSAGES_PER_PASS = 256  # a flood of messages cannot starve the solving
_ModelKey = tuple[str, str]  # (robot, entry)


class MirrorHost:
    """The mirrors of one solver process and the pipe they answer on."""

    def __init__(self, connection: Connection, registry: RobotRegistry) -> None:
        self._connection = connection
        self._registry = registry
        self.sessions: dict[str, Session] = {}
        self._epochs: dict[str, int] = {}
        self.scheduler = Scheduler(name="posekit-solver-process")
        self.scheduler.on_pass = self._publish
        # Sessions waiting for their model: their messages, in arrival order.
        self._waiting: dict[str, tuple[_ModelKey, list[tuple[Any, ...]]]] = {}
        self._loading: set[_ModelKey] = set()
        self._loaded: queue.SimpleQueue[tuple[_ModelKey, mujoco.MjModel | Exception]] = (
            queue.SimpleQueue()
        )
        self._wake_read, self._wake_write = os.pipe()

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
                    message = self._connection.recv()
                    if message[0] == "stop":
                        return
                    try:
                        self.handle(message)
                    except Exception:  # one bad message must not stop every mirror
                        logger.exception("solver process: could not handle %r", message[0])
                    handled += 1
                delay = self.scheduler.step_due()
                if handled == MAX_MESSAGES_PER_PASS:
                    continue
                if delay is None:
                    readable.poll()
                elif delay > 0.0:
                    readable.poll(math.ceil(delay * 1e3))  # [ms]: until a message or a step
        except (EOFError, OSError):
            return
        finally:
            for session in self.sessions.values():
                session.close("solver process stopping")

    def handle(self, message: tuple[Any, ...]) -> None:
        kind, session_id = message[0], message[1]
        waiting = self._waiting.get(session_id)
        if waiting is not None:
            waiting[1].append(message)  # after the open that waits for its model
        elif kind == "open":
            self._open(*message[1:])
        elif kind == "call":
            self._replay(*message[1:])
        elif kind == "export":
            mirror = self.sessions.get(session_id)
            spec = mirror.spec().model_dump(mode="json") if mirror is not None else None
            self._send(("spec", session_id, spec))
        elif kind == "close":
            self._close(session_id)
        else:
            logger.error("solver process: unknown message %r", kind)

    # -------------------------------------------------------------- mirrors
    def _open(
        self,
        session_id: str,
        epoch: int,
        robot: str,
        entry: str,
        spec: Any,
        counters: dict[str, Any],
    ) -> None:
        self._close(session_id)
        key = (robot, entry)
        try:
            loaded = self._registry.is_loaded(robot, entry)
        except Exception as exc:  # e.g. a robot this registry does not know
            self._send(("diverged", session_id, f"open failed: {exc}"))
            return
        if not loaded:
            message = ("open", session_id, epoch, robot, entry, spec, counters)
            self._waiting[session_id] = (key, [message])
            if key not in self._loading:
                self._loading.add(key)
                threading.Thread(target=self._load, args=(key,), daemon=True).start()
            return
        try:
            model = self._registry.model(robot, entry)
            mirror = Session(session_id, spec, model, entry)
        except Exception as exc:
            logger.exception("solver process: could not open session %s", session_id)
            self._send(("diverged", session_id, f"open failed: {exc}"))
            return
        mirror._continue_from(counters)
        mirror._scheduler = self.scheduler
        self.sessions[session_id] = mirror
        self._epochs[session_id] = epoch
        self.scheduler.attach(mirror)

    def _close(self, session_id: str) -> None:
        self._epochs.pop(session_id, None)
        mirror = self.sessions.pop(session_id, None)
        if mirror is not None:
            mirror.close()

    def _replay(self, session_id: str, revision: int, method: str, args: tuple[Any, ...]) -> None:
        mirror = self.sessions.get(session_id)
        if mirror is None:
            return  # not opened yet (its open carries this change) or its open failed
        try:
            if method not in REPLAYABLE:
                raise ValueError(f"{method!r} is not a replayable change")
            with mirror._lock:
                getattr(mirror, method)(*args)
                mirror._revision = revision
        except Exception as exc:
            logger.exception("solver process: replaying %s on %s failed", method, session_id)
            self._close(session_id)
            self._send(("diverged", session_id, f"{method} failed: {exc}"))

    # --------------------------------------------------------------- models
    def _load(self, key: _ModelKey) -> None:
        """Compile a model (on a loader thread) and hand it to the main loop."""
        try:
            result: mujoco.MjModel | Exception = self._registry.model(*key)
        except Exception as exc:
            result = exc
        self._loaded.put((key, result))
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
                    self._send(("diverged", session_id, f"open failed: {result}"))
                    continue
                for message in messages:
                    self.handle(message)

    # ---------------------------------------------------------------- output
    def _publish(self, stepped: list[Session]) -> None:
        states = []
        for session in stepped:
            epoch = self._epochs.get(session.id)
            if epoch is not None and not session.closed:
                state = session.state
                state.json()
                states.append((session.id, epoch, state))
        if states:
            self._send(("states", states))

    def _send(self, message: tuple[Any, ...]) -> None:
        try:
            self._connection.send(message)
        except OSError:
            pass  # the server process is gone; serve() ends on its next receive


def main(connection: Connection, registry: RobotRegistry) -> None:
    """Entry point of a solver process."""
    # Ctrl-C reaches the whole process group: the server stops this process itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=logging.WARNING, format="%(processName)s %(levelname)s %(message)s")
    MirrorHost(connection, registry).serve()
