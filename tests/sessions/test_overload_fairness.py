"""Past saturation a change step keeps its session's place in the cadence line, and a
pass, changes taken during it included, holds at most ``MAX_BATCH`` steps of which the
cadence steps due keep half."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from posekit.sessions.changes import SetQ
from posekit.sessions.loops.pass_taking import MAX_BATCH
from posekit.sessions.loops.scheduler import MIN_PASS_INTERVAL, Scheduler
from posekit.sessions.state import SessionState
from posekit.sessions.subscription import SignalBatch
from support.busy_session import BusySession

RATE_HZ = 60.0


def _late_line(sessions: list[BusySession]) -> Scheduler:
    """A scheduler whose ``sessions`` have each been stepped, then left until every
    cadence step is many periods late: a line longer than a pass."""
    scheduler = Scheduler()
    for session in sessions:
        scheduler.attach(session)
    deadline = time.monotonic() + 10.0
    while min(len(s.states) for s in sessions) < 1:
        assert time.monotonic() < deadline, "the sessions were not stepped"
        scheduler.step_due()
    time.sleep(12 / RATE_HZ)
    return scheduler


def _one_pass(scheduler: Scheduler) -> None:
    """Run the next pass (passes start at most every ``MIN_PASS_INTERVAL``)."""
    deadline = time.monotonic() + 5.0
    while scheduler.step_due() != 0.0:
        assert time.monotonic() < deadline, "no pass ran"
        time.sleep(MIN_PASS_INTERVAL / 4)


def test_a_late_session_changed_keeps_its_place_in_the_cadence_line() -> None:
    """Three passes' worth of late sessions; one pass steps the first ``MAX_BATCH`` of
    the line. A session further on is changed: its change is stepped first in the next
    pass, and its cadence step still comes with the rest of its part of the line, in the
    pass after — not behind everything stepped since, two passes later.

    So past saturation the cadence steps go round all sessions however their changes
    are timed. (When a change step sent its session to the back of the line, at 1000
    eager arm7 sessions a third of them, contiguous in the clients' phases, got almost
    no cadence steps: 0.82–0.93 of the mean rate.)"""
    sessions = [BusySession(f"s{i}", cost=0.0) for i in range(MAX_BATCH * 5 // 2)]
    scheduler = _late_line(sessions)
    for session in sessions:
        session.states.clear()
    _one_pass(scheduler)  # the first MAX_BATCH of the line
    first = [s for s in sessions if s.states]
    rest = [s for s in sessions if not s.states]
    assert len(first) == MAX_BATCH, len(first)
    changed = rest[-1]  # the last of the line: stepped in the next pass, by its change
    scheduler.wake(changed)
    _one_pass(scheduler)  # the change, then MAX_BATCH - 1 more of the line
    assert len(changed.states) == 1
    waiting = [s for s in rest if not s.states]
    assert 0 < len(waiting) < MAX_BATCH - 1, len(waiting)  # the rest of the old line
    _one_pass(scheduler)
    assert all(len(s.states) == 1 for s in waiting), "the old line's rest was not stepped"
    assert len(changed.states) == 2, "the changed session lost its place in the line"
    # The pass goes on with the line's next part, not all of it: a change step that sent
    # the session to the back would have put it behind all of these.
    assert 0 < sum(len(s.states) > 1 for s in first) < len(first)


def test_a_flood_of_changes_leaves_the_cadence_line_its_share_of_a_pass() -> None:
    """Past saturation, when the back of the cadence line is changed all at once, the
    next pass fills half its places with the changes and the other half
    (``CADENCE_SHARE``) with the front of the line. (Taking every change first, passes
    past saturation answered changes only, and the sessions went on in step with up to a
    third fewer states in all: README, Sessions.)"""
    sessions = [BusySession(f"s{i}", cost=0.0) for i in range(MAX_BATCH * 5 // 2)]
    scheduler = _late_line(sessions)
    front, changed = sessions[:120], sessions[120:]
    for session in sessions:
        session.states.clear()
    for session in changed:
        scheduler.wake(session)
    _one_pass(scheduler)
    half = MAX_BATCH // 2
    assert [bool(s.states) for s in front] == [True] * half + [False] * (len(front) - half)
    assert sum(bool(s.states) for s in changed) == half


class _LoggedSession(BusySession):
    """A busy session that appends its id to a shared ``log`` when stepped and calls
    ``on_step(len(log))`` after; ``parks``: its steps converge (no cadence step after)."""

    def __init__(
        self, name: str, log: list[str], rate_hz: float = RATE_HZ, parks: bool = False
    ) -> None:
        super().__init__(name, cost=0.0, rate_hz=rate_hz)
        self.log, self.parks = log, parks
        self.on_step: Callable[[int], None] | None = None

    def step(
        self, batch: SignalBatch | None = None, throttled: bool = False, rate_hz: float = 0.0
    ) -> SessionState:
        state = super().step(batch, throttled, rate_hz)
        self.log.append(self.id)
        if self.on_step is not None:
            self.on_step(len(self.log))
        if self.parks:
            state = dataclasses.replace(state, converged=True, status="converged")
        return state


def test_a_pass_takes_changes_due_during_it_only_while_it_has_room() -> None:
    """A late line of ``MAX_BATCH - 2`` sessions: while its pass runs, five parked
    sessions are changed (at its fifth step). The pass takes two of them, next, which
    fills it; the other three are the first steps of the next pass, each stepped once.
    (Unbounded, a pass past saturation took nearly every session's change at once, and
    the sessions went on in step with up to a third fewer states: README, Sessions.)"""
    log: list[str] = []
    line = [_LoggedSession(f"s{i}", log) for i in range(MAX_BATCH - 2)]
    parked = [_LoggedSession(f"d{i}", log, rate_hz=1000.0, parks=True) for i in range(5)]
    scheduler = _late_line([*line, *parked])
    assert all(len(s.states) == 1 for s in parked)  # stepped once, then parked
    log.clear()

    def change_all(steps: int) -> None:
        if steps == 5:
            for session in parked:
                scheduler.changed(session, SetQ([]))

    for session in line:
        session.on_step = change_all
    _one_pass(scheduler)
    assert len(log) == MAX_BATCH, log
    assert log[5:7] == ["d0", "d1"], log[:10]
    first = log[:]
    for session in line:
        session.on_step = None
    _one_pass(scheduler)
    assert log[len(first) : len(first) + 3] == ["d2", "d3", "d4"], log[len(first) :][:10]
    assert [len(s.states) for s in parked] == [2] * 5
