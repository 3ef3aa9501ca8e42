"""Answers first: a pass publishes the states answering changes before its last step.

A pass of the :class:`~posekit.sessions.loops.scheduler.Scheduler` steps the changes due
first, and a change that comes due during the pass next. Once the changes taken so far
are stepped, their states are published at once — first, with the states stepped before
them — instead of waiting for the pass's last step, and the rest of the pass follows in
a publication of its own (at most one early publication per ``EARLY_PUBLISH_INTERVAL``).
A pass of the whole grid takes a few milliseconds (100 arm7 sessions: 3–9 ms, by
machine), which a dragged session's state no longer waits for.

Not when the pass starts *behind* (:func:`starts_behind`: its oldest cadence step late by
more than ``BEHIND`` of a period): past saturation, with changes coming all the time,
early publications would cut passes into small batches, each with its pickling, wake-up
and answer, whose costs the loop has no time for (at 200 eager sessions on a saturated
machine, publishing early in every pass lost 6–17 % of the states).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from posekit.sessions.loops.solve_loop import Due

# [s] At most one early publication per this interval.
EARLY_PUBLISH_INTERVAL = 0.002
# A pass whose oldest cadence step is late by more than this fraction of its period
# starts behind (the loop is short of time): it publishes its states once, at its end.
BEHIND = 0.5


def starts_behind(due: Iterable[Due], now: float) -> bool:
    """Whether a pass of ``due`` (changes first) starts behind at ``now`` [s, monotonic]:
    its oldest cadence step is late by more than ``BEHIND`` of its period."""
    for at, session, urgent in due:
        if not urgent:  # changes come first: this is the oldest cadence step
            return now - at > BEHIND * session.period
    return False


class EarlyPublication:
    """Whether a pass publishes what it stepped so far (module docstring).

    Args:
        behind: Whether the pass starts behind (then it never publishes early).
    """

    __slots__ = ("_last", "allowed")

    def __init__(self, behind: bool) -> None:
        self.allowed = not behind
        self._last = -math.inf  # [s] the pass's last early publication (its clock)

    def now(self, next_is_change: bool, at: float) -> bool:
        """After a step at ``at`` [s, the pass's clock] that leaves answers unpublished:
        whether to publish them now (then it counts as published at ``at``)."""
        if not self.allowed or next_is_change or at - self._last < EARLY_PUBLISH_INTERVAL:
            return False
        self._last = at
        return True
