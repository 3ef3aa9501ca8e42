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
    """

    def __init__(
        self,
        apply: Apply[T],
        revision: Callable[[], int],
        hold_s: float = HOLD_S,
        period: Callable[[], float] | None = None,
    ) -> None:
        self._apply = apply
        self._revision = revision
        self._hold_s = hold_s
        self._period = period
        self._awaited: int | None = None  # the revision whose state answers our last one
        self._overdue_at = 0.0  # [s, monotonic] when the answer to it is overdue
        self._waiting: dict[str, tuple[T, Any]] = {}
        self._timer: asyncio.TimerHandle | None = None
        self.superseded = 0
        """Targets replaced by a newer one of the same task before they were applied."""

    @property
    def waiting(self) -> int:
        """Targets waiting for the answer to the previous one."""
        return len(self._waiting)

    def offer(self, task: str, target: T, ref: Any) -> None:
        """A target from the client: applied now, or kept until the previous is answered."""
        waiting = self._waiting
        if self._awaited is None and not waiting:  # so no timer either (see _flush)
            if self._apply(task, target, ref):  # at once: a polite client's every target
                self._await_answer()
            return
        if waiting.pop(task, None) is not None:
            self.superseded += 1
        waiting[task] = (target, ref)
        if self._awaited is None or time.monotonic() >= self._overdue_at:
            self._flush()
        elif self._timer is None:
            delay = max(0.0, self._overdue_at - time.monotonic())
            self._timer = asyncio.get_running_loop().call_later(delay, self._overdue)

    def answered(self, revision: int) -> None:
        """A state of ``revision`` was offered to this client: it answers our last target
        when it is as new; then the waiting targets are applied."""
        if self._awaited is not None and revision >= self._awaited:
            self._awaited = None
            if self._waiting:  # (nothing waiting: no timer either, nothing to flush)
                self._flush()

    def close(self) -> None:
        """The stream ended: waiting targets are dropped, the timer cancelled."""
        self._waiting.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _overdue(self) -> None:
        self._timer = None
        self._flush()

    def _flush(self) -> None:
        """Apply every waiting target in order; the answer to them is then awaited. (A
        timer runs only while a target waits: this and :meth:`close` empty both.)"""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        waiting, self._waiting = self._waiting, {}
        applied = False
        for task, (target, ref) in waiting.items():
            applied = self._apply(task, target, ref) or applied
        if applied:
            self._await_answer()

    def _await_answer(self) -> None:
        """Targets were applied: the state of the session's revision now answers them."""
        self._awaited = self._revision()
        hold = self._hold_s
        if self._period is not None and (longer := HOLD_PERIODS * self._period()) > hold:
            hold = longer
        self._overdue_at = time.monotonic() + hold
