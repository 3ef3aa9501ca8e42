"""The scheduler's cadence: changes are answered at once without adding steps, and
published before the rest of their pass; the sessions of one rate step on a common grid,
in one pass."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable

from posekit.sessions.changes import SetQ
from posekit.sessions.loops.cadence_grid import on_grid
from posekit.sessions.loops.scheduler import Scheduler
from posekit.sessions.state import SessionState
from posekit.sessions.subscription import SignalBatch
from support.busy_session import BusySession
from support.drive import drive
from support.waiting import wait_for


def test_changes_take_the_place_of_cadence_steps() -> None:
    """A 60 Hz session changed 20 times a second is still stepped about 60 times a
    second (each change step replaces the next cadence step; before, every change
    added a step: about 67 a second), and every change is answered by a step."""
    session = BusySession("dragged", cost=0.0001)
    scheduler = Scheduler()
    scheduler.start()
    answered = 0
    try:
        scheduler.attach(session)
        wait_for(lambda: len(session.states) > 5, what="first steps")
        session.states.clear()
        window, changes = 2.0, 40
        for _ in range(changes):
            before = len(session.states)
            scheduler.changed(session, SetQ([]))
            time.sleep(window / changes)
            answered += len(session.states) > before
        steps = len(session.states)
    finally:
        scheduler.stop()
    assert answered == changes
    assert steps <= 1.05 * 60 * window, steps


def test_cadence_due_times_move_up_to_the_grid_of_their_period() -> None:
    """A due time on a multiple of the period (up to float error) stays there; any other
    moves up to the next multiple, less than a period later."""
    period = 1.0 / 60.0
    assert on_grid(7 * period, period) == 7 * period
    assert on_grid(7 * period + 1e-13, period) == 7 * period
    assert on_grid(7.3 * period, period) == 8 * period
    generator = random.Random(3)
    for _ in range(1000):
        due, period = generator.uniform(0.0, 1e6), generator.choice([1 / 30, 1 / 60, 0.0125])
        moved = on_grid(due, period)
        assert due - 1e-6 * period <= moved < due + period
        assert math.isclose(moved / period, round(moved / period), abs_tol=1e-6)
        following = on_grid(moved + period, period)  # the next cadence step: one period on
        assert math.isclose(following, moved + period, rel_tol=0.0, abs_tol=1e-9)


def test_sessions_of_one_rate_share_their_passes() -> None:
    """Four 60 Hz sessions attached a few milliseconds apart (phases that no pass's
    lookahead would gather) are stepped together once they keep to the grid: after
    their first steps, most passes step all four (a pass may split when the driving
    thread is late: a late step is rescheduled from its own time)."""
    sessions = [BusySession(f"s{i}", cost=0.0001) for i in range(4)]
    scheduler = Scheduler()
    passes: list[int] = []
    scheduler.on_pass = lambda stepped: passes.append(len(stepped))
    for session in sessions:
        scheduler.attach(session)
        scheduler.step_due()
        time.sleep(0.004)  # 4 ms apart: beyond the pass lookahead (2 ms)
    drive(scheduler, 1.0)
    settled = passes[8:]
    assert min(len(s.states) for s in sessions) >= 30  # every one kept stepping
    assert len(settled) >= 20
    assert sum(size == len(sessions) for size in settled) >= 0.8 * len(settled), passes


class _TriggerSession(BusySession):
    """A busy session that calls ``trigger`` (once) during its next step."""

    trigger: Callable[[], None] | None = None

    def step(
        self, batch: SignalBatch | None = None, throttled: bool = False, rate_hz: float = 0.0
    ) -> SessionState:
        trigger, self.trigger = self.trigger, None
        if trigger is not None:
            trigger()
        return super().step(batch, throttled, rate_hz)


def _pass_with_a_change(late_s: float) -> list[list[str]]:
    """The publications (session ids) of ten 20 Hz sessions' passes after the fifth
    changes a 1 Hz session during its step, the first of them ``late_s`` late."""
    cadence = [_TriggerSession(f"s{i}", cost=0.0005, rate_hz=20.0) for i in range(10)]
    dragged = BusySession("dragged", cost=0.0001, rate_hz=1.0)  # off the 20 Hz passes
    scheduler = Scheduler()
    published: list[list[str]] = []
    scheduler.on_pass = lambda stepped: published.append([s.id for s in stepped])
    for session in [*cadence, dragged]:
        scheduler.attach(session)
    drive(scheduler, 0.6)  # past the dragged session's wake spacing (half its period)
    quiet = [ids for ids in published[-10:] if "dragged" not in ids]
    assert quiet and all(len(ids) == len(cadence) for ids in quiet), published[-10:]
    published.clear()
    cadence[4].trigger = lambda: scheduler.changed(dragged, SetQ([]))
    time.sleep(late_s)
    drive(scheduler, 0.2)
    return published


def test_a_change_is_published_before_the_rest_of_its_pass() -> None:
    """A change that comes due during a pass of ten sessions is stepped next and its
    state published at once, first, with the states stepped before it; the rest of the
    pass follows in a publication of its own. Passes without a change publish once.
    (Before, every state of a pass waited for its last step.) At 20 Hz, a pass would
    have to start 25 ms late to count as behind."""
    published = _pass_with_a_change(0.0)
    answer = next(i for i, ids in enumerate(published) if "dragged" in ids)
    assert published[answer][0] == "dragged", published[answer]
    rest = published[answer + 1]  # the same pass's other sessions, published after
    assert sorted(published[answer][1:] + rest) == sorted(f"s{i}" for i in range(10))
    assert "s4" in published[answer] and "s9" in rest, published


def test_a_pass_that_starts_behind_publishes_once() -> None:
    """Past saturation no answer is published early: a pass that starts more than half
    a period late (80 ms, at 20 Hz) publishes the change's state with all the others,
    first, at its end."""
    published = _pass_with_a_change(0.08)
    answer = next(ids for ids in published if "dragged" in ids)
    assert answer[0] == "dragged" and len(answer) == 11, published


def test_a_change_during_a_pass_takes_the_place_of_its_sessions_later_step() -> None:
    """A change to a session still waiting for its step in the pass is stepped next, in
    place of that step: the session is stepped once in the pass, not twice (its first
    state would be superseded before anyone saw it)."""
    sessions = [_TriggerSession(f"s{i}", cost=0.0005, rate_hz=20.0) for i in range(10)]
    scheduler = Scheduler()
    published: list[list[str]] = []
    scheduler.on_pass = lambda stepped: published.append([s.id for s in stepped])
    for session in sessions:
        scheduler.attach(session)
    drive(scheduler, 0.3)
    assert all(len(ids) == len(sessions) for ids in published[-3:]), published[-3:]
    published.clear()
    sessions[4].trigger = lambda: scheduler.changed(sessions[9], SetQ([]))
    drive(scheduler, 0.12)  # two or three passes of 50 ms
    steps = [ids for publication in published for ids in publication]
    by_session = {s.id: steps.count(s.id) for s in sessions}
    assert by_session["s9"] == by_session["s0"], (by_session, published)
    answer = next(i for i, ids in enumerate(published) if ids[0] == "s9")
    assert published[answer][1:] == [f"s{i}" for i in range(5)], published
    assert "s9" not in published[answer + 1], published
