"""Fair shares of the solver's time: light sessions keep their rate, heavy ones slow first.

A running session *demands* :math:`d_i = c_i\\,r_i` seconds of solving per second, where
:math:`c_i` is the smoothed CPU time of its step [s] and :math:`r_i` its rate [Hz]. While
:math:`\\sum_i d_i \\le C` — the solver's *capacity*, a fraction of one core — nobody is
slowed. Beyond it, the capacity is shared max–min fairly (water-filling): the level
:math:`L` solves :math:`\\sum_i \\min(d_i, L) = C`; a session with :math:`d_i \\le L` keeps
its rate, and one above it is stepped every :math:`c_i / L` seconds instead of every
:math:`1/r_i` (its states then say ``throttled``). So however heavy some sessions are, the
others keep their rate, and the heavy ones share what is left evenly.

A session's cost is known from its second step (the first builds its plan and warms
caches, and is forgotten); a single slow step (a garbage collection, a page fault)
counts as at most ``OUTLIER`` times the smoothed cost, and a throttled session is still
stepped at least every ``MAX_PERIOD_S``. Costs are the CPU time of the solver thread
during the step, so time spent waiting for a core or for the GIL is not charged.
Parked sessions (converged, failed, paused) demand nothing.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

SMOOTHING = 0.2  # weight of the newest step in a session's smoothed cost
SMOOTHING_DOWN = 0.5  # its weight when it cost less than the smoothed cost
OUTLIER = 4.0  # a step costing more than this × the smoothed cost counts as this much
MAX_PERIOD_S = 1.0  # [s] a throttled session is still stepped at least this often
REFRESH_S = 0.25  # [s] the level is recomputed at most this often
SETTLED_STEPS = 8  # a smoothed cost is trusted after this many steps (a cold one forgotten)


@dataclass
class _Demand:
    cost: float  # [s] smoothed CPU time of a step
    rate: float  # [Hz] the session's own rate
    running: bool = True
    steps: int = 1  # steps recorded; the first (plans built, caches cold) is replaced


class FairShare:
    """Per-session demand and the water level of the solver (module docstring).

    Args:
        capacity: Seconds of solving per second the sessions may take together
            before the heaviest are slowed (a fraction of one core; ``inf``: never slow).
        refresh_s: The level is recomputed at most this often [s].
    """

    def __init__(self, capacity: float, refresh_s: float = REFRESH_S) -> None:
        if not capacity > 0:
            raise ValueError(f"capacity must be > 0, got {capacity}")
        self.capacity = capacity
        self.refresh_s = refresh_s
        self._demands: dict[object, _Demand] = {}
        self._level = math.inf
        self._refreshed = -math.inf
        self._lock = threading.Lock()

    def record(self, key: object, cost: float, rate_hz: float, running: bool) -> None:
        """A step of ``key`` took ``cost`` seconds of CPU; it keeps running at
        ``rate_hz`` unless it parked (``running`` false)."""
        with self._lock:
            self._add(key, cost, rate_hz, running)

    def _add(self, key: object, cost: float, rate_hz: float, running: bool) -> None:
        """Record a step of ``key`` (lock held)."""
        demand = self._demands.get(key)
        if demand is None:
            self._demands[key] = _Demand(cost, rate_hz, running)
            return
        if demand.steps == 1:
            demand.cost = cost
        else:
            smoothed = min(cost, OUTLIER * demand.cost)
            weight = SMOOTHING if smoothed > demand.cost else SMOOTHING_DOWN
            demand.cost += weight * (smoothed - demand.cost)
        demand.steps += 1
        demand.rate = rate_hz
        demand.running = running

    def forget(self, key: object) -> None:
        """``key`` is no longer stepped."""
        with self._lock:
            self._demands.pop(key, None)

    def period(self, key: object, period: float) -> tuple[float, bool]:
        """The period [s] to step ``key`` at instead of its own ``period``, and whether
        that slows it (it is throttled)."""
        demand = self._demands.get(key)
        if demand is None or demand.steps < 2:
            return period, False
        level = self.level()
        if demand.cost * demand.rate <= level:
            return period, False
        return max(period, min(demand.cost / level, MAX_PERIOD_S)), True

    def cost(self, key: object, settled: bool = False) -> float:
        """The smoothed CPU time of a step of ``key`` [s] (0 while it is unknown;
        ``settled``: until ``SETTLED_STEPS`` were recorded, cold caches forgotten)."""
        demand = self._demands.get(key)
        if demand is None or (settled and demand.steps < SETTLED_STEPS):
            return 0.0
        return demand.cost

    def level(self) -> float:
        """The water level :math:`L` [s/s] (``inf`` while the solver is not overloaded)."""
        now = time.monotonic()
        return self._level if now - self._refreshed < self.refresh_s else self._refresh(now)

    def _refresh(self, now: float) -> float:
        """Recompute the level at ``now`` [s, monotonic] and return it."""
        self._refreshed = now
        demands = self._running_demands()
        self._level = water_level(demands, self.capacity)
        return self._level

    def total_demand(self) -> float:
        """:math:`\\sum_i d_i` over running sessions [s/s] (metrics)."""
        return sum(self._running_demands())

    def _running_demands(self) -> list[float]:
        with self._lock:
            return [d.cost * d.rate for d in self._demands.values() if d.running and d.steps > 1]


def water_level(demands: list[float], capacity: float) -> float:
    """The level :math:`L` with :math:`\\sum_i \\min(d_i, L) = C`, or ``inf`` when
    :math:`\\sum_i d_i \\le C` (nobody needs to be slowed)."""
    if sum(demands) <= capacity:
        return math.inf
    remaining, left = capacity, len(demands)
    for demand in sorted(demands):
        share = remaining / left
        if demand > share:
            return share
        remaining -= demand
        left -= 1
    return math.inf  # unreachable: the sum exceeds the capacity
