"""One solver thread that steps every due session.

Sessions wait in two queues ordered by due time (:mod:`~posekit.sessions.loops.due_queue`):
*changes* (a session woken by a new target, weight, task…) and *cadence* (a running
session's next regular step, one period after its previous one). The thread pops what
is due — changes first, with a share of each pass kept for cadence steps
(:mod:`~posekit.sessions.loops.pass_taking`) — steps it (off the event loop) and puts it
back one period later unless it parked (converged, failed or paused). A change steps
the session early, in place of its next cadence step, and the cadence goes on from that
step's due time: changes are answered at once without raising the session's rate (which
the stream would only drop). A change never waits behind the cadence backlog; past
saturation, at most behind a full pass's share of cadence steps.

Under overload due times slide instead of piling up, and late cadence steps form a line
in which a change step keeps its session's place (:func:`.cadence_grid.next_due`): the
cadence steps the loop has time for go round all sessions however their changes are
timed. A change that comes due during a pass takes the place of its session's step later
in that pass: no session is stepped twice in one pass.

A solver process (:mod:`posekit.sessions.loops.solver_worker`) drives the same scheduler from
its own loop, pass by pass, with :meth:`Scheduler.step_due` instead of the thread.

Sessions share the loop fairly (:mod:`~posekit.sessions.loops.fair_share`): while the
sessions' steps together take more than the loop's ``capacity``, the heaviest are
stepped less often (their states say ``throttled``) so that the others keep their rate.
Between two steps of a pass, changes that came due are stepped first, while the pass has
room (:func:`.pass_taking.take_changes_due`).

With ``extra_steps`` (a solver process, whose loop has a core of its own) the capacity
is what the loop *guarantees* first, not a ceiling: a throttled session is stepped (and a
change to it answered) at its fair share's spacing, and besides at its own whenever
nothing else is due — an *extra step*, from a third queue, in passes of about
``EXTRA_PASS_S`` of steps, started at once (they are due already). Light sessions keep
their rate and go first; what the loop has beyond the capacity is not left idle.
Sessions that all cost alike are not throttled at all (the fair share has no one to
protect). What rate a state reports: :mod:`~posekit.sessions.loops.session_slot`. The
thread of :meth:`Scheduler.start` shares the GIL with the event loop and keeps the
capacity as a ceiling.

One thread, not one per session: stepping is Python-bound (under the GIL more threads
add switching, not throughput). Sessions due within ``LOOKAHEAD`` are stepped in one
pass, passes start at most every ``MIN_PASS_INTERVAL``, each wakes each event loop once.

Cadence steps keep to a common grid (:mod:`~posekit.sessions.loops.cadence_grid`): the
sessions of one rate are due at the same instants, and one pass steps them all, sharing
its costs; a pass takes at most ``MAX_BATCH`` sessions, of which cadence steps due
keep half against a flood of changes. Answers go first
(:mod:`~posekit.sessions.loops.early_publication`): once a pass has stepped the changes
taken so far, their states are published at once instead of after its last step.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence

from posekit.sessions.changes import Change
from posekit.sessions.loops.cadence_grid import next_due
from posekit.sessions.loops.due_queue import DueQueue
from posekit.sessions.loops.early_publication import EarlyPublication, starts_behind
from posekit.sessions.loops.fair_share import FairShare
from posekit.sessions.loops.pass_taking import (
    MAX_BATCH,
    take_changes_due,
    take_extra,
    take_pass,
)
from posekit.sessions.loops.session_slot import SessionSlot
from posekit.sessions.loops.solve_loop import Due, LoopSession
from posekit.sessions.subscription import SignalBatch

logger = logging.getLogger(__name__)

# A change steps the session at once, but never sooner than this fraction of a period
# after its previous step (a flood of changes cannot exceed 2× rate_hz).
WAKE_SPACING = 0.5
LOOKAHEAD = 0.002  # [s] sessions due this soon are stepped in the current pass
MIN_PASS_INTERVAL = 0.001  # [s] between the starts of two passes

_Entry = tuple[float, int, LoopSession]  # (due, token, session)


class Scheduler:
    """The solve-loop thread shared by all sessions of a :class:`SessionManager`
    (a :class:`~posekit.sessions.loops.solve_loop.SolveLoop`).

    Args:
        name: The thread's name.
        capacity: Seconds of solving per second the sessions may take together before
            the heaviest are throttled (a fraction of one core; ``inf``: never).
        extra_steps: Whether throttled sessions also get the loop's time left over, at
            their own rate (module docstring; for :meth:`step_due`'s callers).
    """

    def __init__(
        self, name: str = "posekit-solver", capacity: float = math.inf, extra_steps: bool = False
    ) -> None:
        self._name = name
        self.fair_share = FairShare(capacity, ceiling=not extra_steps)
        self.extra_steps = extra_steps
        # The condition's lock, taken directly where nobody waits (Condition's own
        # __enter__ is a Python call); the thread waits on the condition.
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._sleeping = False  # whether the solver thread waits on the condition
        self._changes: DueQueue[LoopSession] = DueQueue()
        self._cadence: DueQueue[LoopSession] = DueQueue()
        self._extra: DueQueue[LoopSession] = DueQueue()  # throttled ones' own-rate dues
        self._slots: dict[LoopSession, SessionSlot] = {}
        self._thread: threading.Thread | None = None
        self._running = False
        self._last_pass = 0.0
        self.steps = 0
        self.on_steps: Callable[[Sequence[float]], None] | None = None
        """Called after each pass with its steps' solve times [µs] (metrics), on the
        solver thread."""
        self.on_pass: Callable[[list[LoopSession]], None] | None = None
        """Called after each pass with the sessions it stepped, on the solver thread."""

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
    def attach(self, session: LoopSession) -> None:
        """Start stepping a new session."""
        self.wake(session)

    def changed(self, session: LoopSession, change: Change) -> None:
        """The session accepted a change: step it soon (the change itself is applied)."""
        self.wake(session)

    def wake(self, session: LoopSession) -> None:
        """Step ``session`` as soon as allowed, ahead of the cadence backlog (a change);
        a throttled one at its fair share's spacing, and with extra steps besides at its
        own (an extra step, when the loop has time)."""
        with self._lock:
            slot = self._slots.get(session)
            if slot is None:
                if session.closed:
                    return
                slot = self._slots[session] = SessionSlot()
            now, own_spacing = time.monotonic(), WAKE_SPACING * session.period
            spacing = slot.period if slot.period is not None else own_spacing
            at = max(now, slot.last_step + spacing)
            if slot.due is not None:
                if slot.urgent and slot.due <= at:
                    return
                if not slot.urgent:
                    slot.replaced = slot.due
                at = min(at, slot.due)
            extra = 0.0
            if self.extra_steps and slot.period is not None:  # never above its own rate
                extra = max(now, slot.last_step + session.period)
            self._push(session, slot, at, urgent=True, extra=extra)

    def _push(
        self, session: LoopSession, slot: SessionSlot, at: float, urgent: bool, extra: float = 0.0
    ) -> None:
        """Make ``(at, urgent)`` the session's valid entry, and with ``extra`` > 0 its
        extra step's due time its other one (the first popped invalidates the other;
        condition held)."""
        if session.closed:
            self._slots.pop(session, None)
            return
        # Sooner than anything scheduled: the sleeping thread re-times (a thread that
        # calls step_due never sleeps here).
        notify = self._sleeping and at < self._earliest()
        slot.token += 1
        slot.due = at
        slot.urgent = urgent
        (self._changes if urgent else self._cadence).push(at, slot.token, session)
        if extra > 0.0:
            self._extra.push(extra, slot.token, session)
        if notify:
            self._cond.notify()

    def _earliest(self) -> float:
        """When the first entry of either queue is due (condition held; inf: none)."""
        changes, cadence = self._changes.times, self._cadence.times
        # Comparisons, not min(): in CPython 3.11 min() and max() parse their keyword
        # arguments on every call, which costs more than the comparison itself.
        first = changes[0] if changes else math.inf
        return cadence[0] if cadence and cadence[0] < first else first

    def encodings(self, session: LoopSession, encodings: frozenset[str]) -> None:
        """Nothing to do: in this process, watchers encode a state once, when first sent."""

    def remove(self, session: LoopSession) -> None:
        """Never step ``session`` again (it was deleted)."""
        with self._lock:
            self._slots.pop(session, None)
            self.fair_share.forget(session)

    # ------------------------------------------------------------------ loop
    def _valid(self, entry: _Entry) -> SessionSlot | None:
        """The session's slot if ``entry`` is a valid entry of it (condition held; an
        entry's twin taken before it left the session in flight, ``due`` None)."""
        slot = self._slots.get(entry[2])
        if slot is None or slot.token != entry[1] or slot.due is None:
            return None
        return slot

    def _prune(self, queue: DueQueue[LoopSession]) -> None:
        while queue.times and self._valid(queue.head()) is None:
            queue.pop()  # stale: the session was rescheduled or removed

    def _take_due(self) -> tuple[list[Due], float | None]:
        """Sessions due now (changes first) and 0, or none and the seconds until one is
        due (None: nothing is scheduled). Condition held."""
        self._prune(self._changes)
        self._prune(self._cadence)
        heads = [q.times[0] for q in (self._changes, self._cadence) if q.times]
        now = time.monotonic()
        first = min(heads) if heads else math.inf
        delay = max(first, self._last_pass + MIN_PASS_INTERVAL) - now
        if self.extra_steps:
            self._prune(self._extra)
            if self._extra.times:
                extra = self._extra.times[0]
                if extra <= now < first:  # nothing else is due: at once, not spaced
                    return take_extra(self._extra, self._slots, now, self.fair_share.cost), 0.0
                if now < extra < now + delay:
                    delay = extra - now
        if delay == math.inf:
            return [], None
        if delay > 0:
            return [], delay
        self._last_pass = now
        return take_pass(self._changes, self._cadence, self._slots, now + LOOKAHEAD), 0.0

    def step_due(self) -> float | None:
        """Run one pass when sessions are due (returns 0); otherwise return the seconds
        until one is due (None: nothing is scheduled).

        For a caller that drives the loop on its own thread instead of :meth:`start`.
        """
        with self._lock:
            due, delay = self._take_due()
        if due:
            self._run_pass(due, SignalBatch())
        return delay

    def _run(self) -> None:
        batch = SignalBatch()
        while True:
            with self._cond:
                due, delay = self._take_due()
                while not due and self._running:
                    self._sleeping = True
                    self._cond.wait(delay)
                    self._sleeping = False
                    due, delay = self._take_due()
                if not self._running:
                    return
            self._run_pass(due, batch)

    def _run_pass(self, due: list[Due], batch: SignalBatch) -> None:
        """Step ``due`` (and the changes that come due meanwhile, next, each in place of
        its session's step later in the pass); publish the states: answers to changes
        early (module docstring), the rest at the end."""
        pending = deque(due)
        answers: list[LoopSession] = []  # stepped for a change, not yet published
        stepped: list[LoopSession] = []  # the others, not yet published
        charges: list[tuple[LoopSession, float, float, bool]] = []  # Charge
        solve_us: list[float] = []
        # CPU time: the thread's CPU clock (a system call) is read at the start of the
        # pass and after its last step; each step's wall time (perf_counter, no system
        # call) apportions it (FairShare.charge_pass).
        clock, changes = time.perf_counter, self._changes.times  # (read once a pass)
        cpu = time.thread_time()
        last = clock()
        early = EarlyPublication(starts_behind(due, time.monotonic()))
        while pending:
            item = pending.popleft()
            rate_hz, running, step_us = self._step(item, batch)
            solve_us.append(step_us)
            now = clock()
            session = item[1]
            charges.append((session, now - last, rate_hz, running))
            last = now
            (answers if item[2] else stepped).append(session)
            room = MAX_BATCH - len(charges) - len(pending)
            if pending and changes and room > 0:  # (changes read without the lock: a hint)
                with self._lock:
                    pending = take_changes_due(
                        self._changes, self._slots, pending, room, time.monotonic()
                    )
            if answers and pending and early.now(pending[0][2], now):
                self._publish(answers + stepped, batch)
                answers, stepped = [], []
        cpu = time.thread_time() - cpu
        with self._lock:  # as remove(): a session removed during the pass stays forgotten
            self.fair_share.charge_pass([c for c in charges if not c[0].closed], cpu)
        if self.on_steps is not None:
            self.on_steps(solve_us)
        self._publish(answers + stepped, batch)

    def _publish(self, stepped: list[LoopSession], batch: SignalBatch) -> None:
        """Hand the states of ``stepped`` on: this process's watchers (``batch``) and
        :attr:`on_pass` (a solver process's batch to the server process)."""
        batch.flush()
        if self.on_pass is not None and stepped:
            try:
                self.on_pass(stepped)
            except Exception:
                logger.exception("the pass hook failed")

    def _step(self, item: Due, batch: SignalBatch) -> tuple[float, bool, float]:
        """Step one session and schedule its next step; returns its own rate [Hz] and
        whether it keeps running (for its fair share), and the step's solve time [µs]."""
        at, session, urgent = item
        own_period = session.period
        period, throttled = self.fair_share.period(session, own_period)
        slot = self._slots.get(session)  # (read without the lock: its floats)
        rate_hz = (
            1.0 / period
            if slot is None
            else slot.rate_hz(period, own_period, throttled, self.extra_steps)
        )
        solve_us = 0.0
        try:
            state = session.step(batch, throttled, rate_hz)
            keep_going, solve_us = state.status == "running", state.solve_us
        except Exception:  # a bug in one session must not stop the others
            logger.exception("session %s: step crashed", session.id)
            keep_going = False
        with self._lock:
            slot = self._slots.get(session)
            if slot is not None:
                now = time.monotonic()
                slot.stepped(now, keep_going)
                slot.period = period if throttled else None
                replaced, slot.replaced = slot.replaced, None
                if keep_going and slot.due is None:  # not rescheduled by a change
                    kept = replaced if urgent else None  # the cadence step it replaced
                    due = next_due(at, kept, period, not throttled, now)
                    extra = 0.0
                    if throttled and self.extra_steps:
                        extra = (at if kept is None else kept) + own_period
                        extra = extra if extra > now else now
                    self._push(session, slot, due, False, extra)
        self.steps += 1
        return 1.0 / own_period, keep_going, solve_us
