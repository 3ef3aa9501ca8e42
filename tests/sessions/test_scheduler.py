"""The scheduler's cadence: changes are answered at once without adding steps."""

from __future__ import annotations

import time

from posekit.sessions.changes import SetQ
from posekit.sessions.loops.scheduler import Scheduler
from support.busy_session import BusySession
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
