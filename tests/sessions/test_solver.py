"""The solver, as sessions see it: their rate held, changes answered, parked sessions
left alone, and past saturation every session slowed alike. Bounds are loose on the
slow side (a busy machine slows everyone) and tight where the solver itself decides
(a session never stepped faster than its rate allows)."""

from __future__ import annotations

import time

from posekit.sessions.solving.solver import Solver
from support.busy_session import BusySession
from support.waiting import wait_for


def _run(solver: Solver, sessions: list[BusySession], seconds: float) -> dict[str, int]:
    """Attach ``sessions``, let them warm up, and count their steps over ``seconds``."""
    for session in sessions:
        solver.attach(session)
    wait_for(lambda: all(len(s.states) > 3 for s in sessions), what="first steps")
    for session in sessions:
        session.states.clear()
    time.sleep(seconds)
    return {s.id: len(s.states) for s in sessions}


def test_a_running_session_is_stepped_at_its_rate() -> None:
    session = BusySession("one", cost=0.0001, rate_hz=50.0)
    solver = Solver()
    solver.start()
    try:
        counts = _run(solver, [session], 2.0)
    finally:
        solver.stop()
    assert 0.5 * 100 <= counts["one"] <= 1.05 * 100, counts


def test_every_change_is_answered_without_raising_the_rate_past_twice() -> None:
    """40 changes in 2 s to a 30 Hz session: each is followed by a step, and a flood of
    changes steps it at most twice its rate (``WAKE_SPACING``)."""
    session = BusySession("dragged", cost=0.0001, rate_hz=30.0)
    solver = Solver()
    solver.start()
    answered = 0
    try:
        solver.attach(session)
        wait_for(lambda: len(session.states) > 3, what="first steps")
        for _ in range(40):
            before = len(session.states)
            solver.changed(session)
            wait_for(lambda before=before: len(session.states) > before, what="an answer")
            answered += 1
        session.states.clear()
        end = time.monotonic() + 1.0
        while time.monotonic() < end:  # a flood: a change every 0.1 ms
            solver.changed(session)
            time.sleep(0.0001)
        flooded = len(session.states)
    finally:
        solver.stop()
    assert answered == 40
    assert flooded <= 2 * 30 * 1.0 + 2, flooded


def test_a_parked_session_is_not_stepped_until_it_changes() -> None:
    session = BusySession("parked", cost=0.0001)
    session.parks = True
    solver = Solver()
    solver.start()
    try:
        solver.attach(session)
        wait_for(lambda: len(session.states) == 1, what="its step")
        time.sleep(0.3)
        assert len(session.states) == 1
        solver.changed(session)
        wait_for(lambda: len(session.states) == 2, what="the change's step")
    finally:
        solver.stop()


def test_a_closed_session_is_never_stepped_again() -> None:
    session = BusySession("gone", cost=0.0001)
    solver = Solver()
    solver.start()
    try:
        solver.attach(session)
        wait_for(lambda: len(session.states) > 3, what="steps")
        session.closed = True  # as Session.close does, before it removes itself
        solver.remove(session)
        time.sleep(0.05)  # a step under way ends
        count = len(session.states)
        solver.changed(session)  # a change after removal does nothing either
        time.sleep(0.3)
    finally:
        solver.stop()
    assert len(session.states) == count


def test_past_saturation_sessions_slow_alike() -> None:
    """Ten sessions each wanting 0.3 s of CPU per second (5 ms steps at 60 Hz) on one
    thread: each gets about a tenth of it, none starves."""
    sessions = [BusySession(f"s{i}", cost=0.005) for i in range(10)]
    solver = Solver()
    solver.start()
    try:
        counts = _run(solver, sessions, 2.0)
    finally:
        solver.stop()
    assert max(counts.values()) < 60 * 2.0, counts  # saturated: nobody at its own rate
    assert min(counts.values()) >= 0.75 * max(counts.values()), counts


def test_changes_take_the_place_of_regular_steps() -> None:
    """A 60 Hz session changed 20 times a second is stepped about 60 times a second, not
    more: each change steps it early, in place of its next regular step."""
    session = BusySession("dragged", cost=0.0001)
    solver = Solver()
    solver.start()
    try:
        solver.attach(session)
        wait_for(lambda: len(session.states) > 3, what="first steps")
        session.states.clear()
        for _ in range(40):
            solver.changed(session)
            time.sleep(0.05)
        steps = len(session.states)
    finally:
        solver.stop()
    assert steps <= 1.05 * 60 * 2.0 + 2, steps
