"""The scheduler's bookkeeping of one session, and the rate its states report.

A state's ``rate_hz`` is the rate its session is stepped at. A session that is not
throttled reports its own rate while it gets at least ``SLOWED`` of it (a step late by a
few ms is not a slower session), and the rate it gets, smoothed, once the loop is short
of time for everyone and it gets less. A throttled session reports its fair share's
rate; with extra steps (a solver process) the rate it gets, smoothed, when that is more,
and never more than its own. The rate it gets is the inverse of the smoothed interval
between its steps while it runs (exponential smoothing, the newest interval weighted
``RATE_SMOOTHING``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

RATE_SMOOTHING = 0.2  # weight of the newest interval in the rate a session gets
# A session that gets less than this fraction of its own rate (the loop is short of time
# for everyone) reports the rate it gets; above it, its own.
SLOWED = 0.9


@dataclass
class SessionSlot:
    """One session's scheduling state (guarded by the scheduler's lock)."""

    token: int = 0  # the valid queue entry's token; older entries are stale
    due: float | None = None  # when its valid entry is due; None: none (in flight, parked)
    urgent: bool = False  # whether that entry is a change (not a cadence step)
    replaced: float | None = None  # when the cadence step a pending change replaced was due
    last_step: float = -math.inf  # [s, monotonic] when it was last stepped
    period: float | None = None  # [s] its period when throttled, else None
    interval: float = 0.0  # [s] smoothed time between its steps while running; 0: none
    running: bool = False  # whether its last step rescheduled it (the next gap counts)

    def rate_hz(self, period: float, own_period: float, throttled: bool, extra: bool) -> float:
        """The rate [Hz] the session's next state reports, stepped every ``period`` [s]
        (its fair share's, or ``own_period``), ``extra``: with extra steps (module
        docstring)."""
        rate_hz = 1.0 / period
        if self.interval > 0.0:
            gets = 1.0 / self.interval
            if throttled and extra:  # its share, and extra steps besides
                rate_hz = min(1.0 / own_period, max(rate_hz, gets))
            elif gets < SLOWED * rate_hz:  # the loop is short of time for everyone
                rate_hz = gets
        return rate_hz

    def stepped(self, now: float, running: bool) -> None:
        """The session was stepped at ``now`` [s, monotonic]; ``running``: it goes on
        (the interval since its previous step counts when that one went on too)."""
        if self.running:
            gap, interval = now - self.last_step, self.interval
            self.interval = gap if interval == 0.0 else interval + RATE_SMOOTHING * (gap - interval)
        else:
            self.interval = 0.0
        self.last_step = now
        self.running = running
