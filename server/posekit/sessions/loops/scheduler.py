"""One solver thread that steps every due session.

Sessions wait in two queues ordered by due time (:mod:`~posekit.sessions.loops.due_queue`):
*changes* (a session woken by a new target, weight, task…) and *cadence* (a running
session's next regular step, one period after its previous one). The thread pops what
is due — changes first — steps it (off the event loop) and puts it back one period
later unless it parked (converged, failed or paused). A change steps the session
early, in place of its next cadence step, and the cadence goes on from that step's due
time: changes are answered at once without raising the session's rate (which the
stream would only drop). Under overload due times slide instead of piling up, the
queue order keeps sessions round-robin, and interaction stays responsive because a
change never waits behind the cadence backlog.

A solver process (:mod:`posekit.sessions.loops.solver_worker`) drives the same scheduler from
its own loop, pass by pass, with :meth:`Scheduler.step_due` instead of the thread.

Sessions share the loop fairly (:mod:`~posekit.sessions.loops.fair_share`): while the
sessions' steps together take more than the loop's ``capacity``, the heaviest are
stepped less often (their states say ``throttled``) so that the others keep their rate.
Between two steps of a pass, changes that came due are stepped first, so a change never
waits for more than one step of another session.

With ``extra_steps`` (a solver process, whose loop has a core of its own) the capacity
is what the loop *guarantees* first, not a ceiling: a throttled session is stepped (and a
change to it answered) at its fair share's spacing, and besides at its own whenever
nothing else is due — an *extra step*, from a third queue, in passes of about
``EXTRA_PASS_S`` of steps, started at once (they are due already). Light sessions keep
their rate and go first; what the loop has beyond the capacity is not left idle. A
throttled state's ``rate_hz`` is the rate it gets, smoothed; sessions that all cost
alike are not throttled at all (the fair share has no one to protect), and when the
loop is short of time for all of them, each state's ``rate_hz`` is again the rate its
session gets, smoothed, once that is below ``SLOWED`` of its own. The thread of
:meth:`Scheduler.start` shares the GIL with the event loop and keeps the capacity as a
ceiling.

One thread rather than one per session: stepping is Python-bound, so under the GIL
more threads add switching, not throughput, and parked sessions cost nothing. Work is
batched: sessions due within ``LOOKAHEAD`` are stepped in one pass, passes start at
most every ``MIN_PASS_INTERVAL``, and each pass wakes each event loop once.

Cadence steps keep to a common grid: a session's next cadence step, due one period after
the one before, is moved up to the next multiple of its period on the monotonic clock
(:func:`on_grid`; by less than a period, once after its first step, after a change
step that replaced no cadence step, or after a step taken more than a period late, which
is rescheduled from its own time). So the sessions of one rate are due at the
same instants, and a pass steps all of them at once instead of the few whose
arbitrary phases fall within ``LOOKAHEAD`` of each other: the costs paid per pass rather
than per step — waking the thread, reading its CPU clock, pickling, writing and reading
the batch, waking the server process's event loop and answering the batch — are shared
by up to ``MAX_BATCH`` states, and no state comes before its time. A change is still
stepped at once, off the grid (its step replaces the cadence step, whose grid time the
cadence goes on from); a throttled session keeps its fair share's spacing.

Answers go first. A pass steps the changes due first, and a change that comes due
during a pass next; once the changes taken so far are stepped, their states are
published at once — first, with the states stepped before them — instead of waiting for
the pass's last step, and the rest of the pass follows in a publication of its own (at
most one early publication per ``EARLY_PUBLISH_INTERVAL``). Not when the pass starts
behind (its oldest cadence step late by more than ``BEHIND`` of a period): past
saturation, with changes coming all the time, early publications would cut passes into
small batches, whose costs the loop has no time for. A pass of the whole grid takes a
few milliseconds (100 arm7 sessions: 3–9 ms, by machine), which a dragged session's
state no longer waits for.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from posekit.sessions.changes import Change
from posekit.sessions.loops.due_queue import DueQueue
from posekit.sessions.loops.fair_share import FairShare
from posekit.sessions.loops.solve_loop import LoopSession
from posekit.sessions.subscription import SignalBatch

logger = logging.getLogger(__name__)

# A change steps the session at once, but never sooner than this fraction of a period
# after its previous step (a flood of changes cannot exceed 2× rate_hz).
WAKE_SPACING = 0.5
# A cadence step's due time is moved up to the next multiple of the session's period
# (GRID_SLACK: a due time this close to a multiple, in periods, counts as on it).
GRID_SLACK = 1e-6
# Sessions stepped per pass at most. A change never waits for a whole pass (changes due
# are stepped between two steps of it); the pass's states go to the server process as one
# batch, so under overload larger passes mean fewer batches and answers per state (at
# 800 eager sessions, 128 rather than 32 gave 5-12 % more states in all).
MAX_BATCH = 128
LOOKAHEAD = 0.002  # [s] sessions due this soon are stepped in the current pass
MIN_PASS_INTERVAL = 0.001  # [s] between the starts of two passes
EXTRA_PASS_S = 0.005  # [s] of smoothed step costs taken for one pass of extra steps
# [s] A pass publishes the states answering changes (with those stepped before them) as
# soon as the changes taken so far are stepped, at most once per this interval; the rest
# at its end.
EARLY_PUBLISH_INTERVAL = 0.002
# A pass whose oldest cadence step is late by more than this fraction of its period
# starts behind (the loop is short of time): it publishes its states once, at its end.
BEHIND = 0.5
RATE_SMOOTHING = 0.2  # weight of the newest interval in the rate a session gets
# A session that gets less than this fraction of its own rate (the loop is short of time
# for everyone) reports the rate it gets; above it, its own (a step late by a few ms is
# not a slower session).
SLOWED = 0.9

_Entry = tuple[float, int, LoopSession]  # (due, token, session)
_Due = tuple[float, LoopSession, bool]
"""A session taken for a pass: when it was due, the session, and whether for a change
(a plain tuple: one is made per step, and a named tuple's constructor is Python)."""


@dataclass
class _Slot:
    """The scheduler's bookkeeping of one session (guarded by the condition)."""

    token: int = 0  # the valid queue entry's token; older entries are stale
    due: float | None = None  # when its valid entry is due; None: none (in flight, parked)
    urgent: bool = False  # whether that entry is a change (not a cadence step)
    replaced: float | None = None  # when the cadence step a pending change replaced was due
    last_step: float = -math.inf  # [s, monotonic] when it was last stepped
    period: float | None = None  # [s] its period when throttled, else None
    interval: float = 0.0  # [s] smoothed time between its steps while running; 0: none
    running: bool = False  # whether its last step rescheduled it (the next gap counts)


def _behind(due: list[_Due], now: float) -> bool:
    """Whether a pass of ``due`` starts behind: its oldest cadence step is late by more
    than ``BEHIND`` of its period. The loop is then short of time for its sessions, and
    publishing answers early would only add batches (and the work they cost)."""
    for at, session, urgent in due:
        if not urgent:  # changes come first: this is the oldest cadence step
            return now - at > BEHIND * session.period
    return False


def on_grid(due: float, period: float) -> float:
    """The first multiple of ``period`` at or after ``due`` [s, monotonic]: every session
    of one rate steps at the same instants (module docstring)."""
    return math.ceil(due / period - GRID_SLACK) * period


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
        self._slots: dict[LoopSession, _Slot] = {}
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
                slot = self._slots[session] = _Slot()
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
        self, session: LoopSession, slot: _Slot, at: float, urgent: bool, extra: float = 0.0
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
    def _valid(self, entry: _Entry) -> _Slot | None:
        """The session's slot if ``entry`` is a valid entry of it (condition held; an
        entry's twin taken before it left the session in flight, ``due`` None)."""
        slot = self._slots.get(entry[2])
        if slot is None or slot.token != entry[1] or slot.due is None:
            return None
        return slot

    def _prune(self, queue: DueQueue[LoopSession]) -> None:
        while queue.times and self._valid(queue.head()) is None:
            queue.pop()  # stale: the session was rescheduled or removed

    def _take_due(self) -> tuple[list[_Due], float | None]:
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
                    return self._take_extra(now), 0.0
                if now < extra < now + delay:
                    delay = extra - now
        if delay == math.inf:
            return [], None
        if delay > 0:
            return [], delay
        self._last_pass = now
        horizon, slots = now + LOOKAHEAD, self._slots
        due: list[_Due] = []
        for queue in (self._changes, self._cadence):
            urgent, times = queue is self._changes, queue.times
            while times and len(due) < MAX_BATCH and times[0] <= horizon:
                at, token, session = queue.pop()
                slot = slots.get(session)  # (_valid, inlined: once per step)
                if slot is not None and slot.token == token and slot.due is not None:
                    slot.due = None  # in flight
                    due.append((at, session, urgent))
        return due, 0.0

    def _take_extra(self, now: float) -> list[_Due]:
        """Throttled sessions whose own-rate step is due, for a pass of extra steps:
        in due order, until their smoothed costs add up to ``EXTRA_PASS_S`` (at most
        ``MAX_BATCH``; condition held; nothing else is due)."""
        taken: list[_Due] = []
        extra, slots, cost = self._extra, self._slots, 0.0
        times = extra.times
        while times and times[0] <= now and cost < EXTRA_PASS_S and len(taken) < MAX_BATCH:
            at, token, session = extra.pop()
            slot = slots.get(session)  # (_valid, inlined: once per step)
            if slot is not None and slot.token == token and slot.due is not None:
                slot.due = None  # in flight
                taken.append((at, session, False))
                cost += self.fair_share.cost(session)
        return taken

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

    def _run_pass(self, due: list[_Due], batch: SignalBatch) -> None:
        """Step ``due`` (and the changes that come due meanwhile, next); publish the
        states: answers to changes early (module docstring), the rest at the end."""
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
        early = not _behind(due, time.monotonic())  # whether answers may go out early
        published = -math.inf  # [s, perf_counter] this pass's last early publication
        while pending:
            item = pending.popleft()
            rate_hz, running, step_us = self._step(item, batch)
            solve_us.append(step_us)
            now = clock()
            session = item[1]
            charges.append((session, now - last, rate_hz, running))
            last = now
            (answers if item[2] else stepped).append(session)
            if pending and changes:  # (read without the lock: a hint)
                pending.extendleft(reversed(self._take_changes_due()))
            if (
                early
                and answers
                and pending
                and not pending[0][2]  # the changes taken so far are all stepped
                and now - published >= EARLY_PUBLISH_INTERVAL
            ):
                self._publish(answers + stepped, batch)
                answers, stepped, published = [], [], now
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

    def _take_changes_due(self) -> list[_Due]:
        """Changes that came due during a pass, to step next in it."""
        taken: list[_Due] = []
        with self._lock:
            now = time.monotonic()
            self._prune(self._changes)
            changes = self._changes
            while changes.times and changes.times[0] <= now:
                entry = changes.pop()
                slot = self._valid(entry)
                if slot is not None:
                    slot.due = None  # in flight
                    taken.append((entry[0], entry[2], True))
        return taken

    def _step(self, item: _Due, batch: SignalBatch) -> tuple[float, bool, float]:
        """Step one session and schedule its next step; returns its own rate [Hz] and
        whether it keeps running (for its fair share), and the step's solve time [µs]."""
        at, session, urgent = item
        own_period = session.period
        period, throttled = self.fair_share.period(session, own_period)
        rate_hz = 1.0 / period
        slot = self._slots.get(session)  # (read without the lock: a float)
        if slot is not None and slot.interval > 0.0:  # the rate it gets, smoothed
            gets = 1.0 / slot.interval
            if throttled and self.extra_steps:  # its share, and extra steps besides
                rate_hz = min(1.0 / own_period, max(rate_hz, gets))
            elif gets < SLOWED * rate_hz:  # the loop is short of time for everyone
                rate_hz = gets
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
                if slot.running:  # stepped since, without parking: a step interval
                    gap, interval = now - slot.last_step, slot.interval
                    slot.interval = (
                        gap if interval == 0.0 else interval + RATE_SMOOTHING * (gap - interval)
                    )
                else:
                    slot.interval = 0.0
                slot.last_step = now
                slot.running = keep_going
                slot.period = period if throttled else None
                replaced, slot.replaced = slot.replaced, None
                if keep_going and slot.due is None:  # not rescheduled by a change
                    # A change step takes the place of the cadence step it came before:
                    # the cadence goes on from that step's due time, so changes do not
                    # add steps.
                    base = replaced if urgent and replaced is not None else at
                    due, extra = base + period, 0.0
                    if not throttled:
                        due = on_grid(due, period)
                    if throttled and self.extra_steps:
                        extra = base + own_period
                        extra = extra if extra > now else now
                    self._push(session, slot, due if due > now else now, False, extra)
        self.steps += 1
        return 1.0 / own_period, keep_going, solve_us
