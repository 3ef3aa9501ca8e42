"""A stand-in session that burns a given CPU time per step (scheduler tests)."""

from __future__ import annotations

import threading
import time

from posekit.sessions.live.state import SessionState
from posekit.sessions.live.subscription import SignalBatch


class BusySession:
    """A session whose step burns ``cost`` seconds of CPU (and parks when ``parks``)."""

    def __init__(self, name: str, cost: float, rate_hz: float = 60.0) -> None:
        self.id = self.robot = self.entry = name
        self.closed = False
        self.period = 1.0 / rate_hz
        self.revision = 0
        self.cost = cost
        self.parks = False  # whether each step converges (the session parks)
        self.states: list[SessionState] = []
        self._lock = threading.Lock()

    def step(
        self, batch: SignalBatch | None = None, throttled: bool = False, rate_hz: float = 0.0
    ) -> SessionState:
        end = time.thread_time() + self.cost
        while time.thread_time() < end:
            pass
        state = SessionState(
            len(self.states) + 1, time.time(), [], {}, self.parks,
            "converged" if self.parks else "running", None, 0.0,
            throttled=throttled, rate_hz=rate_hz,
        )  # fmt: skip
        with self._lock:
            self.states.append(state)
        return state
