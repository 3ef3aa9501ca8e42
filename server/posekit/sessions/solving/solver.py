"""The solver: one thread that steps every live session when it is due.

Each session has at most one entry in one of two heaps ordered by due time: *changes*
(woken by a new target, weight, task, q…) and *cadence* (a running session's next
regular step). The thread takes the earliest entry that is due, changes first, steps the
session (the compiled step releases the GIL while it computes) and, unless it parked
(converged, failed or paused), schedules its next step one period later. A parked
session has no entry and costs nothing until a change wakes it.

- **Changes first.** A change steps its session as soon as allowed — not sooner than
  ``WAKE_SPACING`` of a period after its previous step, so a flood of targets cannot
  step a session at more than twice its rate — ahead of any late cadence step.
- **Fair share.** While the sessions' steps together take more than ``capacity``
  seconds per second, the heaviest are stepped less often
  (:mod:`~posekit.sessions.solving.fair_share`); their states say ``throttled``.
- **Past saturation** a late session's next step is due one period after it was
  stepped, not after it was due: due times slide instead of piling up, and the heap
  steps the sessions oldest-due first, so they slow alike and none starves.
- **One wake-up per event loop per round.** The states of the sessions due at one
  instant are published together (:class:`~posekit.sessions.live.subscription.SignalBatch`):
  100 sessions at 60 Hz would otherwise wake the event loop 6,000 times a second.

More cores and more machines come from more replicas (README, "Several replicas"),
not from more solver threads: the Python around each step holds the GIL.
"""

from __future__ import annotations

import heapq
import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from posekit.sessions.live.state import SessionState
from posekit.sessions.live.subscription import SignalBatch
from posekit.sessions.solving.fair_share import FairShare

logger = logging.getLogger(__name__)

WAKE_SPACING = 0.5  # a change steps a session no sooner than this × its period after a step
ROUND_S = 0.002  # [s] sessions due this soon after the first are stepped in its round
MAX_ROUND = 64  # sessions stepped at most in one round before their states are published


class Steppable(Protocol):
    """What the solver needs of a session."""

    @property
    def id(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    @property
    def period(self) -> float: ...

    def step(
        self, batch: SignalBatch | None = None, throttled: bool = False, rate_hz: float = 0.0
    ) -> SessionState:
        """Solve one step, publish its state into ``batch`` and return it."""


@dataclass
class _Slot:
    """One session's scheduling state (guarded by the solver's lock)."""

    token: int = 0  # the valid heap entry's token; older entries are stale
    due: float | None = None  # when its valid entry is due; None: no entry
    last_step: float = -math.inf  # [s, monotonic]


_Entry = tuple[float, int, Steppable]  # (due, token, session)


class Solver:
    """Steps live sessions at their rates on one thread (module docstring).

    Args:
        capacity: Seconds of solving per second the sessions may take together before
            the heaviest are throttled (a fraction of one core; ``inf``: never).
        name: The thread's name.
    """

    def __init__(self, capacity: float = math.inf, name: str = "posekit-solver") -> None:
        self.fair_share = FairShare(capacity)
        self._name = name
        self._cond = threading.Condition()
        self._changes: list[_Entry] = []
        self._cadence: list[_Entry] = []
        self._slots: dict[Steppable, _Slot] = {}
        self._tokens = 0
        self._thread: threading.Thread | None = None
        self._running = False
        self.steps = 0
        self.on_steps: Callable[[Sequence[float]], None] | None = None
        """Called after each round with its steps' solve times [µs] (metrics)."""

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

    # ------------------------------------------------------------ scheduling
    def attach(self, session: Steppable) -> None:
        """Start stepping a new session."""
        self.changed(session)

    def changed(self, session: Steppable) -> None:
        """The session accepted a change: step it as soon as allowed (module docstring)."""
        with self._cond:
            slot = self._slots.get(session)
            if slot is None:
                if session.closed:
                    return
                slot = self._slots[session] = _Slot()
            period, _ = self.fair_share.period(session, session.period)
            at = max(time.monotonic(), slot.last_step + WAKE_SPACING * period)
            if slot.due is not None and slot.due <= at:
                return  # already due as soon
            self._push(self._changes, session, slot, at)

    def remove(self, session: Steppable) -> None:
        """Never step ``session`` again (it was closed)."""
        with self._cond:
            self._slots.pop(session, None)
        self.fair_share.forget(session)

    def _push(self, heap: list[_Entry], session: Steppable, slot: _Slot, at: float) -> None:
        """Make ``at`` the session's one valid entry (lock held); older ones go stale."""
        self._tokens += 1
        slot.token, slot.due = self._tokens, at
        heapq.heappush(heap, (at, self._tokens, session))
        self._cond.notify()

    # ------------------------------------------------------------------ loop
    def _head(self, heap: list[_Entry]) -> float:
        """When the heap's first valid entry is due (stale ones dropped; inf: none)."""
        while heap:
            due, token, session = heap[0]
            slot = self._slots.get(session)
            if slot is not None and slot.token == token:
                return due
            heapq.heappop(heap)
        return math.inf

    def _take_round(self) -> list[_Entry]:
        """The entries due now, changes first, at most ``MAX_ROUND`` (lock held; their
        sessions have no entry while they are stepped: ``due`` None); empty when none is
        due."""
        now = time.monotonic()
        taken: list[_Entry] = []
        for heap in (self._changes, self._cadence):
            while len(taken) < MAX_ROUND and self._head(heap) <= now + ROUND_S:
                entry = heapq.heappop(heap)
                self._slots[entry[2]].due = None
                taken.append(entry)
        return taken

    def _run(self) -> None:
        while True:
            with self._cond:
                taken = self._take_round()
                while not taken and self._running:
                    first = min(self._head(self._changes), self._head(self._cadence))
                    self._cond.wait(None if first == math.inf else first - time.monotonic())
                    taken = self._take_round()
                if not self._running:
                    return
            self._step_round(taken)

    def _step_round(self, taken: list[_Entry]) -> None:
        """Step the sessions of one round and publish their states together."""
        batch = SignalBatch()
        solve_us = [self._step(due, session, batch) for due, _, session in taken]
        batch.flush()
        if self.on_steps is not None:
            self.on_steps(solve_us)

    def _step(self, due: float, session: Steppable, batch: SignalBatch) -> float:
        """Step a session due at ``due``, charge its CPU time and schedule its next
        step; returns the step's solve time [µs]."""
        own_period = session.period
        period, throttled = self.fair_share.period(session, own_period)
        cpu = time.thread_time()
        try:
            state = session.step(batch, throttled, 1.0 / period)
            running, solve_us = state.status == "running", state.solve_us
        except Exception:  # a bug in one session must not stop the others
            logger.exception("session %s: step crashed", session.id)
            running, solve_us = False, 0.0
        self.fair_share.record(session, time.thread_time() - cpu, 1.0 / own_period, running)
        self.steps += 1
        now = time.monotonic()
        with self._cond:
            slot = self._slots.get(session)
            if slot is None:
                return solve_us  # removed meanwhile
            slot.last_step = now
            if running and slot.due is None:  # not rescheduled by a change meanwhile
                # On cadence from when it was due; a step late by more than a period
                # slides to now (behind the sessions due before it) instead of piling up.
                self._push(self._cadence, session, slot, max(due + period, now))
        return solve_us
