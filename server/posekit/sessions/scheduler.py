"""One solver thread that steps every due session.

Sessions are kept in a heap by due time. The thread pops the sessions that are due,
steps each one (off the event loop), and puts it back one period later unless it
parked (converged, failed or paused). Any change wakes a session through
:meth:`Scheduler.wake`. When steps take longer than their periods, due times slide
instead of piling up, and the heap order keeps the sessions round-robin.

One thread rather than one per session: stepping is Python-bound, so with the GIL more
threads would add switching without adding throughput, and 100 parked sessions cost
nothing. Signals to the event loops are batched: one callback per loop per pass.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from typing import TYPE_CHECKING

from posekit.sessions.subscription import SignalBatch

if TYPE_CHECKING:
    from posekit.sessions.session import Session

logger = logging.getLogger(__name__)

# A change steps the session at once, but never sooner than this fraction of a period
# after its previous step, so a flood of changes cannot exceed 4× rate_hz.
WAKE_SPACING = 0.25
MAX_BATCH = 64  # sessions stepped between two looks at the heap (and loop signals)


class Scheduler:
    """The solve-loop thread shared by all sessions of a :class:`SessionManager`."""

    def __init__(self, name: str = "posekit-solver") -> None:
        self._name = name
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, int, Session]] = []
        self._counter = itertools.count()
        self._thread: threading.Thread | None = None
        self._running = False
        self.steps = 0

    # --------------------------------------------------------------- control
    def start(self) -> None:
        """Start the solver thread (idempotent)."""
        with self._cond:
            if self._running:
                return
            self._running = True
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the solver thread and wait for it."""
        with self._cond:
            self._running = False
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    @property
    def running(self) -> bool:
        return self._running

    # ------------------------------------------------------------ scheduling
    def wake(self, session: Session) -> None:
        """Step ``session`` as soon as allowed (a change happened)."""
        now = time.monotonic()
        at = max(now, session._last_step + WAKE_SPACING * session.period)
        self._schedule(session, at)

    def _schedule(self, session: Session, at: float) -> None:
        with self._cond:
            due = session._sched_due
            if session.closed or (due is not None and due <= at):
                return
            session._sched_token += 1
            session._sched_due = at
            heapq.heappush(self._heap, (at, next(self._counter), session._sched_token, session))
            if self._heap[0][3] is session:
                self._cond.notify()

    def remove(self, session: Session) -> None:
        """Never step ``session`` again (it was deleted)."""
        with self._cond:
            session._sched_token += 1
            session._sched_due = None

    # ------------------------------------------------------------------ loop
    def _pop_due(self) -> list[tuple[float, Session]]:
        """Sessions due now (waiting until one is), or [] when stopping."""
        with self._cond:
            while self._running:
                while self._heap and self._heap[0][2] != self._heap[0][3]._sched_token:
                    heapq.heappop(self._heap)  # stale entry
                if not self._heap:
                    self._cond.wait()
                    continue
                delay = self._heap[0][0] - time.monotonic()
                if delay > 0:
                    self._cond.wait(delay)
                    continue
                due: list[tuple[float, Session]] = []
                now = time.monotonic()
                while self._heap and len(due) < MAX_BATCH and self._heap[0][0] <= now:
                    at, _, token, session = heapq.heappop(self._heap)
                    if token == session._sched_token:
                        session._sched_due = None  # in flight
                        due.append((at, session))
                return due
            return []

    def _run(self) -> None:
        batch = SignalBatch()
        while True:
            due = self._pop_due()
            if not due:
                return
            for at, session in due:
                try:
                    keep_going = session._step(batch)
                except Exception:  # a bug in one session must not stop the others
                    logger.exception("session %s: step crashed", session.id)
                    keep_going = False
                self.steps += 1
                if keep_going:
                    now = time.monotonic()
                    self._schedule(session, max(at + session.period, now))
            batch.flush()
