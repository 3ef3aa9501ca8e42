"""Fair share of the solver: heavy sessions are slowed first, light ones keep their rate."""

from __future__ import annotations

import math
import time

import pytest
from posekit.sessions.solving.fair_share import FairShare, water_level
from posekit.sessions.solving.solver import Solver
from support.busy_session import BusySession
from support.waiting import wait_for


@pytest.mark.parametrize(
    ("demands", "capacity", "level"),
    [
        ([0.1, 0.2], 0.5, math.inf),  # under capacity: nobody is slowed
        ([0.1, 0.1, 0.9], 0.5, 0.3),  # the heavy one gets what the light ones leave
        ([0.4, 0.4, 0.4], 0.6, 0.2),  # equal demands share equally
        ([0.05] * 10 + [1.0, 2.0], 0.9, 0.2),
    ],
)
def test_water_level_shares_capacity_max_min_fairly(
    demands: list[float], capacity: float, level: float
) -> None:
    assert water_level(demands, capacity) == pytest.approx(level)
    if math.isfinite(level):
        assert sum(min(d, level) for d in demands) == pytest.approx(capacity)


def _steps(share: FairShare, key: str, costs: list[float], rate_hz: float = 60.0) -> None:
    for cost in costs:
        share.record(key, cost=cost, rate_hz=rate_hz, running=True)


def test_only_sessions_above_the_level_are_slowed() -> None:
    share = FairShare(capacity=0.5, refresh_s=0.0)
    _steps(share, "light", [0.001, 0.001])  # demands 0.06 s/s
    _steps(share, "heavy", [0.02, 0.02])  # demands 1.2 s/s
    assert share.period("light", 1 / 60) == (1 / 60, False)
    period, throttled = share.period("heavy", 1 / 60)
    assert throttled
    assert period == pytest.approx(0.02 / (0.5 - 0.06))  # cost / level: 0.44 s/s left
    share.record("heavy", cost=0.02, rate_hz=60.0, running=False)  # parked: no demand
    assert share.period("light", 1 / 60) == (1 / 60, False)


def test_one_slow_step_cannot_park_a_session() -> None:
    """The first step (plan build) is forgotten, an outlier counts as 4× the smoothed
    cost at most, and a throttled session is stepped at least once a second."""
    share = FairShare(capacity=0.05, refresh_s=0.0)
    for i in range(100):
        _steps(share, f"s{i}", [0.05, 0.0001])  # a slow first step, then the real cost
    level = 0.05 / 100  # every session demands 0.006 s/s: equal shares
    assert share.period("s0", 1 / 60) == (pytest.approx(0.0001 / level), True)  # 0.2 s
    _steps(share, "s1", [0.5])  # a 0.5 s garbage collection in one step: counts as 4×
    cost = 0.0001 + 0.2 * (4 * 0.0001 - 0.0001)
    period, throttled = share.period("s1", 1 / 60)
    assert throttled and period == pytest.approx(cost / share.level())
    assert period < 0.5  # not the 200 s that 0.1 s of smoothed cost would have given
    _steps(share, "hog", [0.2] * 30)  # really that heavy: still stepped once a second
    assert share.period("hog", 1 / 60) == (pytest.approx(1.0), True)
    share.record("new", cost=2.0, rate_hz=60.0, running=True)  # its first step only
    assert share.period("new", 1 / 60) == (1 / 60, False)


def test_a_cost_measured_too_high_is_forgotten_within_a_few_steps() -> None:
    """Its second step (the first counted) found cold caches: 10× its real cost. Slowed
    by it, the session is stepped less often, so the estimate must fall quickly: within
    10 % of the real cost after seven steps (smoothed at 0.2 both ways it would still be
    2.9×). A real rise is believed more slowly: after seven steps at 4× (the outlier
    cap) the estimate is still under 90 % of it."""
    share = FairShare(capacity=0.5, refresh_s=0.0)
    _steps(share, "cold", [0.05, 0.001] + [0.0001] * 7)
    assert share.cost("cold") <= 1.1 * 0.0001
    rising = FairShare(capacity=0.5, refresh_s=0.0)
    _steps(rising, "rising", [0.05, 0.0001] + [0.0004] * 7)
    assert 0.0002 < rising.cost("rising") < 0.9 * 0.0004


def test_heavy_sessions_are_throttled_and_light_ones_keep_their_rate() -> None:
    """Two sessions demanding 0.6 s/s each and five light ones on a loop of capacity 0.3:
    the heavy ones are stepped at the level, the light ones at their rate."""
    heavy = [BusySession(f"heavy{i}", cost=0.01) for i in range(2)]
    light = [BusySession(f"light{i}", cost=0.0002) for i in range(5)]
    solver = Solver(capacity=0.3)
    solver.start()
    try:
        for session in heavy + light:
            solver.attach(session)
        wait_for(lambda: all(len(s.states) > 5 for s in heavy), what="heavy steps")
        for session in heavy + light:
            session.states.clear()
        window = 1.5
        time.sleep(window)
        counts = {s.id: len(s.states) for s in heavy + light}
    finally:
        solver.stop()
    # Light sessions: 60 Hz each (demand 0.012 s/s); the heavy ones share the rest,
    # (0.3 - 5 × 0.012) / 2 = 0.12 s/s each, i.e. 12 steps/s instead of 60.
    # A loaded machine slows everyone (a CPU burner beside the test: light ones at 40
    # steps/s, heavy ones still at 13), so the bounds are loose: the light ones above
    # 30 steps/s and twice the heavy ones, the heavy ones at 30 at most.
    for session in light:
        assert counts[session.id] > 0.5 * 60 * window, counts
        assert counts[session.id] >= 2 * max(counts[s.id] for s in heavy), counts
        assert not any(state.throttled for state in session.states)
    for session in heavy:
        assert counts[session.id] <= 0.5 * 60 * window, counts
        assert session.states[-1].throttled
        assert session.states[-1].rate_hz < 30  # its share, reported in its states
    for session in light:
        assert {state.rate_hz for state in session.states} == {60.0}


def test_without_a_capacity_nobody_is_throttled() -> None:
    heavy = BusySession("heavy", cost=0.01)
    solver = Solver()
    solver.start()
    try:
        solver.attach(heavy)
        wait_for(lambda: len(heavy.states) > 20, what="steps")
    finally:
        solver.stop()
    assert not any(state.throttled for state in heavy.states)
