"""Driving a scheduler from the test's thread, as a solver process does."""

from __future__ import annotations

import time

from posekit.sessions.loops.scheduler import Scheduler


def drive(scheduler: Scheduler, seconds: float, nap: float = 0.005) -> None:
    """Run ``step_due`` for ``seconds``, sleeping while nothing is due (at most ``nap``
    seconds at a time, so that a change made meanwhile is soon stepped)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        delay = scheduler.step_due()
        if delay is None or delay > 0.0:
            time.sleep(min(delay or nap, nap))
