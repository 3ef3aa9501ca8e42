"""One target in flight per stream client: later ones wait, the latest per task wins.

A client dragging a gizmo sends targets at its own pace (a viewer at its frame rate, a
script at any rate). Applying each at once costs the server a full change — validate,
merge, hand it to the solver process, replay it there — even when the session is
stepped less often than targets come (a loaded machine, a throttled session), so that
most changes are superseded before any state shows them, and the work spent on them is
taken from the steps: past saturation, throughput would collapse instead of levelling
off.

So each stream holds a *credit*: a target is applied at once when the previous target
of this client has been answered — a state of the session's revision after it was
offered to this client — or when that answer is overdue: after ``HOLD_S`` (a paused or
failed session may not answer soon), or ``HOLD_PERIODS`` of the session's step period
when that is longer. A session the machine steps less often (a loaded machine, a
throttled session) still answers every target, only later; applying the next target
before that would supersede a change the session has not stepped yet, work spent for no
state, just when the machine has the least to spare. Otherwise it waits, and a newer target for the same task
replaces it (the order of tasks is kept). When the answer comes, everything waiting is
applied together. So a client's targets reach the session at most once per state it
receives, each target is applied in order or superseded by a newer one of the same
task, and a state's ``ref`` is always that of the newest target applied before it (a
superseded target's ``ref`` is never echoed: clients wait for a ``ref`` at least theirs).

Targets are checked against the message schema when they arrive; a waiting target that
is superseded is not checked further (a refusal of an applied one goes to the client
with its ``ref``, as before).

The credit decides once per read (:meth:`TargetCredit.settle`, after the messages that
one read of the client's socket brought, or after each message taken otherwise), so the
targets of one read are applied together, the newest per task.

And it may *hold the client's reads* (``hold``: :data:`posekit.ws_protocol.HOLD_READS`):
what the client sends meanwhile stays in the kernel, unread. Reads are held while a
target waits, and — once a client has sent a target while its previous one was in
flight (an *eager* client: a target every frame, whatever it received) — from each
application of its targets on, until the answer. When the answer comes (or is
overdue) the credit resumes reading; if the client sent something meanwhile, the
targets are applied only after the read that takes it all, so the newest is applied. A
client that got an answer before it sent anything more is not eager any more. So an
eager client of a session stepped less often than it sends costs the server one read
per answer instead of one per target — past saturation, reading every target was most
of what the server spent per state — and a client that keeps up (a polite one, or any
client below saturation) is read as before, at no cost. A hold ends when the answer
comes or is overdue; the read that follows it is taken in the event loop's next turn,
so the newest target is applied then rather than at the answer itself.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

HOLD_S = 0.25
"""[s] How long a target waits at least for the answer to the previous one."""
HOLD_PERIODS = 4.0
"""A target waits at most this many of the session's step periods for the answer to the
previous one (when that is longer than :data:`HOLD_S`)."""

T = TypeVar("T")

Apply = Callable[[str, T, Any], bool]
"""Applies one target (task, target, ref); False when refused (it tells the client)."""


class TargetCredit(Generic[T]):
    """The targets of one stream client, metered by the states answering them.

    Args:
        apply: Applies a target to the session, at once.
        revision: The session's change counter (read after each application).
        hold_s: A waiting target is applied after this long without an answer [s], or
        period: ... after ``HOLD_PERIODS`` times what this returns, when longer: the
            session's current step period [s] (read after each application; 0: unknown).
        hold: Holds (True) or resumes (False) reading the client's socket; on resuming,
            whether bytes wait to be read (module docstring). None: reads are never held.
    """

    def __init__(
        self,
        apply: Apply[T],
        revision: Callable[[], int],
        hold_s: float = HOLD_S,
        period: Callable[[], float] | None = None,
        hold: Callable[[bool], bool] | None = None,
    ) -> None:
        self._apply = apply
        self._revision = revision
        self._hold_s = hold_s
        self._period = period
        self._hold = hold
        self._awaited: int | None = None  # the revision whose state answers our last one
        self._overdue_at = 0.0  # [s, monotonic] when the answer to it is overdue
        self._waiting: dict[str, tuple[T, Any]] = {}
        self._timer: asyncio.TimerHandle | None = None  # while targets wait or reads are held
        self._held = False  # the client's reads are held
        self._eager = False  # it sent a target while its previous one was in flight
        self._catching_up = False  # reads resumed with bytes waiting: settle after them
        self.superseded = 0
        """Targets replaced by a newer one of the same task before they were applied."""

    @property
    def waiting(self) -> int:
        """Targets waiting for the answer to the previous one."""
        return len(self._waiting)

    def offer(self, task: str, target: T, ref: Any) -> None:
        """A target from the client: kept, replacing a waiting one of the same task (the
        order of tasks is that of their newest targets); :meth:`settle` decides."""
        waiting = self._waiting
        if waiting and waiting.pop(task, None) is not None:
            self.superseded += 1
        waiting[task] = (target, ref)

    def settle(self) -> None:
        """The messages of one read were offered: the waiting targets are applied now if
        the previous ones are answered (or overdue), else they wait (reads held)."""
        self._catching_up = False
        if not self._waiting:
            return
        if self._awaited is not None and self._overdue_at > time.monotonic():
            self._eager = True
            self._hold_reads()
            return
        self._flush()

    def answered(self, revision: int) -> None:
        """A state of ``revision`` was offered to this client: it answers our last target
        when it is as new; then the waiting targets are applied."""
        if self._awaited is not None and revision >= self._awaited:
            self._awaited = None
            if self._held or self._waiting:
                self._release()

    def close(self) -> None:
        """The stream ended: waiting targets are dropped, the timer cancelled."""
        self._waiting.clear()
        self._held = self._catching_up = False
        self._cancel_timer()

    def _hold_reads(self) -> None:
        """Hold the client's reads (when it can be done) until the answer is overdue; the
        timer ends the hold, or applies waiting targets, then."""
        if self._hold is not None and not self._held:
            self._held = True
            self._hold(True)
        if self._timer is None:
            delay = max(0.0, self._overdue_at - time.monotonic())
            self._timer = asyncio.get_running_loop().call_later(delay, self._overdue)

    def _overdue(self) -> None:
        self._timer = None
        if self._catching_up:  # the read after resuming never came: apply what waits
            self._catching_up = False
            self._flush()
        else:
            self._release()

    def _release(self) -> None:
        """The answer came or is overdue: reads resume; the waiting targets go now, or —
        when the client sent something meanwhile — after the read that takes it
        (:meth:`settle`; the timer stays as a backstop)."""
        if self._held:
            self._held = False
            if self._hold is not None and self._hold(False):
                self._catching_up = True
                if self._timer is None:
                    loop = asyncio.get_running_loop()
                    self._timer = loop.call_later(self._hold_s, self._overdue)
                return
            if not self._waiting:
                self._eager = False  # it sent nothing while its target was in flight
        if self._waiting:
            self._flush()
        else:
            self._cancel_timer()

    def _flush(self) -> None:
        """Apply every waiting target in order; the answer to them is then awaited."""
        self._cancel_timer()
        if self._held:  # applied while held (an overdue answer seen in a read)
            self._held = False
            if self._hold is not None:
                self._hold(False)
        waiting, self._waiting = self._waiting, {}
        applied = False
        for task, (target, ref) in waiting.items():
            applied = self._apply(task, target, ref) or applied
        if applied:
            self._await_answer()

    def _await_answer(self) -> None:
        """Targets were applied: the state of the session's revision now answers them
        (an eager client's reads are held until then)."""
        self._awaited = self._revision()
        hold = self._hold_s
        if self._period is not None and (longer := HOLD_PERIODS * self._period()) > hold:
            hold = longer
        self._overdue_at = time.monotonic() + hold
        if self._eager and self._hold is not None:
            self._hold_reads()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
