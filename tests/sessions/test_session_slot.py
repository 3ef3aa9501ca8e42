"""The rate a state reports (``SessionSlot.rate_hz``) and the smoothed interval it reads."""

from __future__ import annotations

import pytest
from posekit.sessions.loops.session_slot import RATE_SMOOTHING, SLOWED, SessionSlot

OWN = 1 / 60


def _slot(*gaps: float) -> SessionSlot:
    """A running session stepped at 0 and then after each of ``gaps`` [s]."""
    slot, now = SessionSlot(), 0.0
    slot.stepped(now, running=True)
    for gap in gaps:
        now += gap
        slot.stepped(now, running=True)
    return slot


def test_the_interval_is_the_first_gap_then_smoothed() -> None:
    slot = _slot(0.02)
    assert slot.interval == pytest.approx(0.02)
    slot.stepped(slot.last_step + 0.03, running=True)
    assert slot.interval == pytest.approx(0.02 + RATE_SMOOTHING * (0.03 - 0.02))


def test_a_parked_session_forgets_its_interval() -> None:
    slot = _slot(0.02, 0.02)
    slot.stepped(slot.last_step + 0.02, running=False)  # it parks after this step
    assert slot.interval == pytest.approx(0.02)
    slot.stepped(slot.last_step + 5.0, running=True)  # woken: the parked gap is no rate
    assert slot.interval == 0.0
    assert slot.rate_hz(OWN, OWN, throttled=False, extra=False) == pytest.approx(60.0)


def test_a_session_not_throttled_reports_its_own_rate_until_it_gets_under_the_bound() -> None:
    assert SessionSlot().rate_hz(OWN, OWN, False, False) == pytest.approx(60.0)  # no gap yet
    late = _slot(OWN, OWN + 0.01)  # one step 10 ms late: 1 / 18.7 ms, under 0.9 × 60
    gets = 1 / late.interval
    assert gets < SLOWED * 60
    assert late.rate_hz(OWN, OWN, False, False) == pytest.approx(gets)
    slightly = _slot(OWN, OWN + 0.002)  # 2 ms late: 58.6 Hz, not a slower session
    assert 1 / slightly.interval > SLOWED * 60
    assert slightly.rate_hz(OWN, OWN, False, False) == pytest.approx(60.0)
    caught_up = _slot(OWN, OWN + 0.01, OWN - 0.01)  # the grid catches up the next step
    assert caught_up.rate_hz(OWN, OWN, False, False) == pytest.approx(60.0)


def test_a_throttled_session_reports_its_share_or_with_extra_steps_what_it_gets() -> None:
    share = 0.1  # [s] its fair share's period: 10 Hz
    slot = _slot(0.05, 0.05, 0.05)  # it gets 20 Hz
    assert slot.rate_hz(share, OWN, throttled=True, extra=False) == pytest.approx(10.0)
    assert slot.rate_hz(share, OWN, throttled=True, extra=True) == pytest.approx(20.0)
    fast = _slot(0.01, 0.01, 0.01)  # 100 Hz with extra steps: never above its own 60
    assert fast.rate_hz(share, OWN, throttled=True, extra=True) == pytest.approx(60.0)
    starved = _slot(0.5, 0.5)  # 2 Hz, under 0.9 of its share's 10 Hz
    assert starved.rate_hz(share, OWN, throttled=True, extra=False) == pytest.approx(2.0)
