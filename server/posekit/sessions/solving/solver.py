"""The solver: steps every live session when it is due, on an asyncio event loop.

Each session has at most one entry in one of two heaps ordered by due time: *changes*
(woken by a new target, weight, task, q…) and *cadence* (a running session's next
regular step). A timer on the event loop takes the entries that are due, changes first,
steps their sessions and, unless they parked (converged, failed or paused), schedules
their next steps one period later. A parked session has no entry and costs nothing until
a change wakes it.

- **Changes first.** A change steps its session as soon as allowed — not sooner than
  ``WAKE_SPACING`` of a period after its previous step, so a flood of targets cannot
  step a session at more than twice its rate — ahead of any late cadence step. It takes
  the place of the session's next regular step, whose cadence goes on: a session
  dragged at 20 Hz is still stepped 60 times a second (``bench/server_load.py``: 68
  states/s a session before, without raising what the stream shows).
- **Fair share.** While the sessions' steps together take more than ``capacity``
  seconds per second, the heaviest are stepped less often
  (:mod:`~posekit.sessions.solving.fair_share`); their states say ``throttled``. The
  capacity is also what the solver may take of the event loop: the rest serves I/O.
- **Past saturation** a late session's next step is due one period after it was
  stepped, not after it was due: due times slide instead of piling up, and the heap
  steps the sessions oldest-due first, so they slow alike and none starves.
- **Rounds.** The sessions due within ``ROUND_S`` are stepped in one round (at most
  ``MAX_ROUND``), then the loop serves I/O before the next round; their states reach the
  watchers together (:class:`~posekit.sessions.live.subscription.SignalBatch`).

**Which loop.** Started from a running event loop (the app's lifespan), the solver
steps on that loop: a state reaches the stream's writer with no thread switch. A solver
thread beside uvicorn's loop spent 89 µs of CPU per arm7 step (12.9 µs alone,
``bench/session_step.py``): handing the GIL back and forth between the two threads and
waking the loop across threads cost more than the step, and 100 sessions got 41–46
states/s where the goal is 57 (``bench/server_load.py --sessions 100 --clients lean``).
Started elsewhere (a script, a test), it runs a loop of its own on a thread.

More cores and more machines come from more replicas (README, "Deploying"), not from
more solver threads: the Python around each step holds the GIL.
"""

from __future__ import annotations

import asyncio
import contextlib
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

    def pause(self, reason: str) -> None:
        """Stop stepping until resumed, saying why."""


@dataclass
class _Slot:
    """One session's scheduling state (guarded by the solver's lock)."""

    token: int = 0  # the valid heap entry's token; older entries are stale
    due: float | None = None  # when its valid entry is due; None: no entry
    urgent: bool = False  # whether that entry is a change's
    replaced: float | None = None  # when the regular step a pending change replaced was due
    last_step: float = -math.inf  # [s, monotonic]


_Entry = tuple[float, int, Steppable]  # (due, token, session)


class Solver:
    """Steps live sessions at their rates, on an event loop (module docstring).

    Args:
        capacity: Seconds of solving per second the sessions may take together before
            the heaviest are throttled (a fraction of one core; ``inf``: never).
        name: The name of its own thread, when it runs one (started outside a loop).
        max_step_s: A session whose steps take more CPU time than this [s] (smoothed)
            is paused (``POSEKIT_MAX_STEP_MS``): each step holds the loop, and so every
            other session's answers. ``inf``: never.
    """

    def __init__(
        self, capacity: float = math.inf, name: str = "posekit-solver", max_step_s: float = math.inf
    ) -> None:
        self.fair_share = FairShare(capacity)
        self.max_step_s = max_step_s
        self._name = name
        self._lock = threading.RLock()  # changes come from any thread
        self._changes: list[_Entry] = []
        self._cadence: list[_Entry] = []
        self._slots: dict[Steppable, _Slot] = {}
        self._tokens = 0
        self._thread: threading.Thread | None = None  # a loop of its own, when it has one
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._armed_at = math.inf  # when the timer fires (inf: not armed)
        self._running = False
        self.steps = 0
        self.on_steps: Callable[[Sequence[float]], None] | None = None
        """Called after each round with its steps' solve times [µs] (metrics)."""

    # --------------------------------------------------------------- control
    def start(self) -> None:
        """Start stepping, on the running event loop, else on a thread of its own
        (idempotent; module docstring)."""
        with self._lock:
            if self._running:
                return
            self._running = True
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(
                target=self._loop.run_forever, name=self._name, daemon=True
            )
            self._thread.start()
        self._in_loop(self._arm)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop stepping (and the solver's own thread, waiting for it)."""
        with self._lock:
            self._running = False
        loop, thread = self._loop, self._thread
        if loop is None:
            return
        self._in_loop(self._disarm)
        if thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
            loop.close()
        self._loop = self._thread = None

    # ------------------------------------------------------------ scheduling
    def attach(self, session: Steppable) -> None:
        """Start stepping a new session."""
        self.changed(session)

    def changed(self, session: Steppable) -> None:
        """The session accepted a change: step it as soon as allowed (module docstring)."""
        with self._lock:
            slot = self._slots.get(session)
            if slot is None:
                if session.closed:
                    return
                slot = self._slots[session] = _Slot()
            period, _ = self.fair_share.period(session, session.period)
            at = max(time.monotonic(), slot.last_step + WAKE_SPACING * period)
            if slot.due is not None and slot.due <= at:
                return  # already due as soon
            if slot.due is not None and not slot.urgent:
                slot.replaced = slot.due  # the change takes this regular step's place
            self._push(self._changes, session, slot, at, urgent=True)

    def remove(self, session: Steppable) -> None:
        """Never step ``session`` again (it was closed)."""
        with self._lock:
            self._slots.pop(session, None)
        self.fair_share.forget(session)

    def _push(
        self, heap: list[_Entry], session: Steppable, slot: _Slot, at: float, urgent: bool
    ) -> None:
        """Make ``at`` the session's one valid entry (lock held); older ones go stale."""
        self._tokens += 1
        slot.token, slot.due, slot.urgent = self._tokens, at, urgent
        heapq.heappush(heap, (at, self._tokens, session))
        if at < self._armed_at and self._loop is not None:  # sooner than the timer
            self._armed_at = at
            self._in_loop(self._arm)

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

    def _in_loop(self, fn: Callable[[], None]) -> None:
        """``fn()`` on the solver's loop: now when called on it, else soon."""
        loop = self._loop
        if loop is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            fn()
        else:
            with contextlib.suppress(RuntimeError):  # the loop is closed: stopped
                loop.call_soon_threadsafe(fn)

    def _arm(self) -> None:
        """Time the next round for the earliest entry (on the loop)."""
        with self._lock:
            self._disarm()
            if not self._running:
                return
            first = min(self._head(self._changes), self._head(self._cadence))
            if first < math.inf and self._loop is not None:
                self._armed_at = first
                delay = max(0.0, first - time.monotonic())
                self._timer = self._loop.call_later(delay, self._round)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._armed_at = math.inf

    def _round(self) -> None:
        """Step what is due, then time the next round (on the loop; between two rounds
        the loop serves I/O)."""
        with self._lock:
            # -inf while the round runs: its pushes do not arm; the end of it does.
            self._timer, self._armed_at = None, -math.inf
            taken = self._take_round() if self._running else []
        if taken:
            self._step_round(taken)
        self._arm()

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
        if running and (cost := self.fair_share.cost(session, settled=True)) > self.max_step_s:
            session.pause(too_slow(cost, self.max_step_s))
        now = time.monotonic()
        with self._lock:
            slot = self._slots.get(session)
            if slot is None:
                return solve_us  # removed meanwhile
            slot.last_step = now
            base = due if slot.replaced is None else slot.replaced
            slot.replaced = None
            if running and slot.due is None:  # not rescheduled by a change meanwhile
                # On cadence from when it (or the regular step a change replaced) was
                # due, so that changes do not raise the rate; a step late by more than
                # a period slides to now (behind those due before it), never piling up.
                self._push(self._cadence, session, slot, max(base + period, now), urgent=False)
        return solve_us


def too_slow(cost_s: float, budget_s: float) -> str:
    """Why a session was paused for its steps' cost [s] over the budget [s]."""
    return (
        f"paused: its steps take {1e3 * cost_s:.1f} ms of CPU, over the server's budget of "
        f"{1e3 * budget_s:g} ms (POSEKIT_MAX_STEP_MS) — while one runs, no other session is "
        "answered; remove tasks, limits or collision pairs, then resume it"
    )
