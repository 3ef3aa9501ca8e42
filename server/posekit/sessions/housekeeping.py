"""The session manager's housekeeping thread.

Every ``interval_s`` seconds it stores the sessions changed since the last pass,
unloads the idle ones, tries again to restore the sessions listed as unavailable (every
``RETRY_UNAVAILABLE_S``) and releases the robot models no session uses any more.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Protocol

from posekit.robots import RobotRegistry

logger = logging.getLogger(__name__)

RETRY_UNAVAILABLE_S = 30.0  # [s] between two attempts to restore an unavailable session


class Housekept(Protocol):
    """What the housekeeper asks of the manager."""

    @property
    def registry(self) -> RobotRegistry: ...

    def flush(self) -> None:
        """Store every live session changed since the last flush."""

    def unload_idle(self) -> list[str]:
        """Unload the sessions idle for too long; the ids unloaded."""

    def retry_unavailable(self) -> None:
        """Try again to restore the sessions listed as unavailable."""


class Housekeeper:
    """Runs ``manager``'s housekeeping every ``interval_s`` seconds (module docstring)."""

    def __init__(self, manager: Housekept, interval_s: float) -> None:
        self.manager = manager
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._next_retry = 0.0

    def start(self) -> None:
        """Start the thread (idempotent)."""
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(
                target=self._run, name="posekit-housekeeping", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """Stop the thread; the next start retries the unavailable sessions at once."""
        self._next_retry = 0.0
        if self._thread is not None:
            self._stop.set()
            self._thread.join(5.0)
            self._thread = None

    def _run(self) -> None:
        manager = self.manager
        due = time.monotonic() + self.interval_s
        while not self._stop.wait(max(0.0, due - time.monotonic())):
            due = max(due + self.interval_s, time.monotonic())  # on cadence, never piling up
            manager.flush()
            try:
                manager.unload_idle()
            except Exception:
                logger.exception("could not unload idle sessions")
            if time.monotonic() >= self._next_retry:
                self._next_retry = time.monotonic() + RETRY_UNAVAILABLE_S
                manager.retry_unavailable()
            manager.registry.expire()
