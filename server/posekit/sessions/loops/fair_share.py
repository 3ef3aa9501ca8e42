"""Fair shares of a solve loop's time: light sessions keep their rate, heavy ones slow first.

A running session *demands* :math:`d_i = c_i\\,r_i` seconds of solving per second, where
:math:`c_i` is the smoothed CPU time of its step [s] and :math:`r_i` its rate [Hz]. While
:math:`\\sum_i d_i \\le C` — the loop's *capacity*, a fraction of one core — nobody is
slowed. Beyond it, the capacity is shared max–min fairly (water-filling): the level
:math:`L` solves :math:`\\sum_i \\min(d_i, L) = C`; a session with :math:`d_i \\le L` keeps
its rate, and one above it is stepped every :math:`c_i / L` seconds instead of every
:math:`1/r_i` (its states then say ``throttled``). So however heavy some sessions are, the
others keep their rate, and the heavy ones share what is left evenly.

Without ``ceiling`` (a solver process, whose loop has a core of its own) the capacity is
a guarantee to the light sessions, not a limit on the loop: when no running session
demands less than :math:`L / \text{ALIKE}` — sessions that cost alike (their measured
costs are noisy), overloading the loop together — slowing them protects nobody, so none
is throttled, and the overloaded loop steps them round-robin at whatever rate it can.
With 500–800 eager arm7 sessions, not throttling them gave 19–31 % more states in all
than capping them at the capacity (one interleaved run each, before the ``ALIKE``
margin), the slowest session at 0.95 of the mean against 0.91–0.93.

A session's cost is known from its second step (the first builds its plan and warms
caches, and is forgotten); a single slow step (a garbage collection, a page fault)
counts as at most ``OUTLIER`` times the smoothed cost, and a throttled session is still
stepped at least every ``MAX_PERIOD_S``: one unlucky measurement cannot park a session
for the many slow steps it would take to forget it. The smoothing is quicker down
(``SMOOTHING_DOWN``) than up (``SMOOTHING``): a cost measured too high (a step that
found cold caches, as the second step often does) throttles its session harder, so it
is stepped less often and would be forgotten ever more slowly, while sessions that cost
the same must be slowed alike. Parked sessions (converged, failed,
paused) demand nothing.

Costs are the CPU time of the stepping thread, so time the process waits for a core or
for the GIL is not charged to the session. The thread's CPU clock is a system call
(about 0.4–1 µs here, a few % of a step), so a pass reads it twice, at its start and
after its last step (:math:`C` seconds of CPU in between), and each step only the wall
clock (``perf_counter``, no system call): step :math:`i` took :math:`w_i` seconds of wall
time, its bookkeeping included, and :math:`\\sum_i w_i - C \\ge 0` is the time the thread
was off the CPU. That time comes in chunks of milliseconds (a time slice, the GIL's
switch interval), longer than a step, so it is taken from the longest steps first: step
:math:`i` is charged :math:`c_i = \\min(w_i, L)` with :math:`\\sum_i \\min(w_i, L) = C`
(:func:`water_level` again; :math:`L = \\infty` when nothing was off the CPU). So the
pass's CPU time is charged in full (:math:`\\sum_i c_i = C`) and no step is charged
more than its wall time. When the thread left the CPU during one step :math:`k` of the
pass, every step that took no more CPU than :math:`k` is charged exactly its own time,
and :math:`k` with the steps heavier than it share the rest evenly (so :math:`k` gets
its own time when it is the pass's heaviest); the smoothing absorbs such a pass.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

SMOOTHING = 0.2  # weight of the newest step in a session's smoothed cost
SMOOTHING_DOWN = 0.5  # its weight when it cost less than the smoothed cost
OUTLIER = 4.0  # a step costing more than this × the smoothed cost counts as this much
MAX_PERIOD_S = 1.0  # [s] a throttled session is still stepped at least this often
REFRESH_S = 0.25  # [s] the level is recomputed at most this often
ALIKE = 1.5  # without a ceiling, only sessions demanding under level / ALIKE are protected


Charge = tuple[object, float, float, bool]
"""A step of a pass: its session (key), wall time [s], rate [Hz] and whether it runs on."""


@dataclass
class _Demand:
    cost: float  # [s] smoothed CPU time of a step
    rate: float  # [Hz] the session's own rate
    running: bool = True
    steps: int = 1  # steps recorded; the first (plans built, caches cold) is replaced


class FairShare:
    """Per-session demand and the water level of one solve loop (module docstring).

    Args:
        capacity: Seconds of solving per second the loop's sessions may take together
            before the heaviest are slowed (a fraction of one core; ``inf``: never slow).
        refresh_s: The level is recomputed at most this often [s].
        ceiling: Whether the capacity caps the loop even when slowing every session
            protects none (module docstring).
    """

    def __init__(self, capacity: float, refresh_s: float = REFRESH_S, ceiling: bool = True) -> None:
        if not capacity > 0:
            raise ValueError(f"capacity must be > 0, got {capacity}")
        self.capacity = capacity
        self.refresh_s = refresh_s
        self.ceiling = ceiling
        self._demands: dict[object, _Demand] = {}
        self._level = math.inf
        self._refreshed = -math.inf
        self._lock = threading.Lock()

    def record(self, key: object, cost: float, rate_hz: float, running: bool) -> None:
        """A step of ``key`` took ``cost`` seconds of CPU; it keeps running at
        ``rate_hz`` unless it parked (``running`` false)."""
        with self._lock:
            self._add(((key, cost, rate_hz, running),), math.inf)

    def charge_pass(self, charges: Sequence[Charge], cpu: float) -> None:
        """A pass took ``cpu`` seconds of the thread's CPU time and stepped the
        ``(key, wall time [s], rate [Hz], running)`` of ``charges``: record each step
        at its share of ``cpu`` (module docstring)."""
        level = water_level([charge[1] for charge in charges], cpu)
        with self._lock:
            self._add(charges, level)

    def _add(self, charges: Sequence[Charge], level: float) -> None:
        """Record each ``(key, cost [s], rate [Hz], running)`` of ``charges``, its cost
        capped at ``level`` (lock held; one loop, not a call a step)."""
        demands = self._demands
        for key, cost, rate_hz, running in charges:
            charged = cost if cost < level else level
            demand = demands.get(key)
            if demand is None:
                demands[key] = _Demand(charged, rate_hz, running)
                continue
            if demand.steps == 1:
                demand.cost = charged
            else:
                ceiling = OUTLIER * demand.cost  # (a comparison: min() parses keywords)
                smoothed = charged if charged < ceiling else ceiling
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
        now = time.monotonic()  # level(), inlined: once a step
        level = self._level if now - self._refreshed < self.refresh_s else self._refresh(now)
        if demand.cost * demand.rate <= level:
            return period, False
        return max(period, min(demand.cost / level, MAX_PERIOD_S)), True

    def cost(self, key: object) -> float:
        """The smoothed CPU time of a step of ``key`` [s] (0 while it is unknown)."""
        demand = self._demands.get(key)
        return 0.0 if demand is None else demand.cost

    def level(self) -> float:
        """The water level :math:`L` [s/s] (``inf`` while the loop is not overloaded)."""
        now = time.monotonic()
        return self._level if now - self._refreshed < self.refresh_s else self._refresh(now)

    def _refresh(self, now: float) -> float:
        """Recompute the level at ``now`` [s, monotonic] and return it."""
        self._refreshed = now
        demands = self._running_demands()
        level = water_level(demands, self.capacity)
        if not self.ceiling and level < math.inf and ALIKE * min(demands) > level:
            level = math.inf  # nobody clearly lighter: slowing the others protects none
        self._level = level
        return level

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
