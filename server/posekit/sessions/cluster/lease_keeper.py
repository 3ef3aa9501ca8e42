"""The thread that keeps a replica's leases: renews them, and takes over expired ones.

Every ``ttl / 3`` seconds it renews every lease the replica holds in one statement; a
session whose lease was lost (it expired and another replica took it) stops being
solved here at once (dropped, unsaved: the new owner's copy is the session). When
renewals fail for longer than a lease lives (the database is unreachable), every
session is dropped: another replica may own them by now, and no save could land
anyway.

Every ``SWEEP_S`` seconds (jittered by ±25 %, so replicas do not sweep in step) it
takes over up to ``SWEEP_BATCH`` expired leases, as many as the replica has room for,
and restores their sessions from the store: a dead replica's sessions are solved again
within about a second of their leases expiring, without any client asking.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from typing import Protocol

from posekit.sessions.cluster.leases import Leases, TakenSession
from posekit.sessions.errors import DatabaseUnavailable

logger = logging.getLogger(__name__)

Adopted = tuple[str, Exception | None]
"""A swept session's id, and why it could not be restored (None: solved here now)."""
SWEEP_S = 1.0
SWEEP_BATCH = 16
JITTER = 0.25


class LeaseHolder(Protocol):
    """What the keeper asks of the manager."""

    def drop(self, session_id: str, reason: str) -> None:
        """Stop solving a session here, without saving it."""

    def adopt_swept(self, take: Callable[[int], list[TakenSession]]) -> list[Adopted]:
        """Take expired leases (``take(room)``: at most ``room`` more sessions) and solve
        their sessions, as one step against a request taking one of them over; each
        session's id and why it could not be restored (None: it is solved here now)."""


class LeaseKeeper:
    """Renews ``leases`` and sweeps expired ones for ``holder`` (module docstring)."""

    def __init__(self, leases: Leases, holder: LeaseHolder, ttl_s: float) -> None:
        self.leases = leases
        self.holder = holder
        self.ttl_s = ttl_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._renewed_at = time.monotonic()

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._renewed_at = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="posekit-leases", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
            self._thread = None

    def _run(self) -> None:
        next_renew = next_sweep = time.monotonic()
        while not self._stop.is_set():
            now = time.monotonic()
            if now >= next_renew:
                next_renew = now + self.ttl_s / 3.0
                self.renew()
            if now >= next_sweep:
                next_sweep = now + SWEEP_S * random.uniform(1.0 - JITTER, 1.0 + JITTER)
                self.sweep()
            self._stop.wait(max(0.0, min(next_renew, next_sweep) - time.monotonic()))

    def renew(self) -> None:
        """Renew every lease; drop the sessions whose lease is lost."""
        started = time.monotonic()
        try:
            lost = self.leases.renew()
        except DatabaseUnavailable as error:
            if time.monotonic() - self._renewed_at > self.ttl_s:
                held = self.leases.held()
                logger.error(
                    "leases not renewed for %.1f s (%s): dropping %d sessions",
                    time.monotonic() - self._renewed_at,
                    error,
                    len(held),
                )
                for session_id in held:
                    self.leases.forget(session_id)
                    self.holder.drop(session_id, "this replica lost the database")
            return
        except Exception:
            logger.exception("lease renewal failed")
            return
        self._renewed_at = started
        for session_id in lost:
            logger.warning("lease of session %s lost to another replica: dropped here", session_id)
            self.holder.drop(session_id, "the session moved to another replica")

    def sweep(self) -> None:
        """Take over expired leases this replica has room for, and solve their sessions."""
        try:
            adopted = self.holder.adopt_swept(
                lambda room: self.leases.sweep(min(SWEEP_BATCH, room))
            )
        except Exception as error:
            logger.warning("lease sweep failed: %s", error)
            return
        for session_id, failure in adopted:
            if failure is None:
                logger.info("took over session %s", session_id)
            else:
                logger.warning("could not restore session %s: %s", session_id, failure)
