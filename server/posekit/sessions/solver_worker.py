"""The body of a solver process: mirrors of sessions, stepped by a :class:`Scheduler`.

Started by :class:`~posekit.sessions.solver_processes.SolverProcesses` (``spawn``), it
reads messages from its pipe and answers with solved states:

- ``("open", session_id, model_id, model | None, spec, entry, counters)``: build a
  mirror of a session from its portable spec (the model is sent once per model id)
  and continue its counters (revision, seq, ref); an open mirror is replaced.
- ``("call", session_id, revision, method, args)``: replay an accepted change.
- ``("close", session_id)``, ``("stop",)``.

and sends ``("states", [(session_id, state), …])`` after each scheduler pass (each
state's JSON already encoded) and ``("diverged", session_id, reason)`` when a replayed
change fails, so that the API process re-opens the mirror from its spec.
"""

from __future__ import annotations

import logging
import math
import select
import signal
from multiprocessing.connection import Connection
from typing import Any

import mujoco

from posekit.sessions.scheduler import Scheduler
from posekit.sessions.session import Session
from posekit.sessions.solve_loop import REPLAYABLE

logger = logging.getLogger(__name__)


class MirrorHost:
    """The mirrors of one solver process and the pipe they answer on.

    One thread reads the pipe and steps the mirrors (no thread switches, no lock
    contention): its :class:`Scheduler` is driven by :meth:`Scheduler.step_due`.
    """

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._models: dict[int, mujoco.MjModel] = {}
        self.sessions: dict[str, Session] = {}
        self.scheduler = Scheduler(name="posekit-solver-process")
        self.scheduler.on_pass = self._publish

    def serve(self) -> None:
        """Apply messages and step the mirrors on this one thread, until ``stop`` or
        until the API process goes away. Messages go first: a change is replayed before
        the next pass, so that pass already answers it."""
        readable = select.poll()  # one poller: Connection.poll() builds a selector per call
        readable.register(self._connection.fileno(), select.POLLIN)
        try:
            while True:
                while readable.poll(0):
                    message = self._connection.recv()
                    if message[0] == "stop":
                        return
                    self.handle(message)
                delay = self.scheduler.step_due()
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
        if kind == "open":
            self._open(*message[1:])
        elif kind == "call":
            self._replay(*message[1:])
        elif kind == "close":
            session = self.sessions.pop(session_id, None)
            if session is not None:
                session.close()
        else:
            logger.error("solver process: unknown message %r", kind)

    def _open(
        self,
        session_id: str,
        model_id: int,
        model: mujoco.MjModel | None,
        spec: Any,
        entry: str,
        counters: dict[str, Any],
    ) -> None:
        if model is not None:
            self._models[model_id] = model
        previous = self.sessions.pop(session_id, None)
        if previous is not None:
            previous.close()
        try:
            mirror = Session(session_id, spec, self._models[model_id], entry)
        except Exception as exc:
            logger.exception("solver process: could not open session %s", session_id)
            self._send(("diverged", session_id, f"open failed: {exc}"))
            return
        mirror._continue_from(counters)
        mirror._scheduler = self.scheduler
        self.sessions[session_id] = mirror
        self.scheduler.attach(mirror)

    def _replay(self, session_id: str, revision: int, method: str, args: tuple[Any, ...]) -> None:
        mirror = self.sessions.get(session_id)
        if mirror is None:
            return  # its open failed and was reported
        try:
            if method not in REPLAYABLE:
                raise ValueError(f"{method!r} is not a replayable change")
            with mirror._lock:
                getattr(mirror, method)(*args)
                mirror._revision = revision
        except Exception as exc:
            logger.exception("solver process: replaying %s on %s failed", method, session_id)
            self.sessions.pop(session_id).close()
            self._send(("diverged", session_id, f"{method} failed: {exc}"))

    def _publish(self, stepped: list[Session]) -> None:
        states = []
        for session in stepped:
            if not session.closed:
                state = session.state
                state.json()
                states.append((session.id, state))
        if states:
            self._send(("states", states))

    def _send(self, message: tuple[Any, ...]) -> None:
        try:
            self._connection.send(message)
        except OSError:
            pass  # the API process is gone; serve() ends on its next receive


def main(connection: Connection) -> None:
    """Entry point of a solver process."""
    # Ctrl-C reaches the whole process group: the server stops this process itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=logging.WARNING, format="%(processName)s %(levelname)s %(message)s")
    MirrorHost(connection).serve()
