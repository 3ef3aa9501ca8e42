"""CPU of one live-session step: ``Session.step`` on the built-in arm's default stack.

Creates a session on arm7 (default preset: ``ee`` frame task + posture) and steps it
in this process (no solve loop, no watchers), as the solver does: solve,
integrate, every task's error norm, the state. The ``ee`` target moves on a circle
(radius 5 cm, a new point every 3 steps, outside the timed calls) so that the session
keeps running instead of converging. Printed per engine (``compiled``, the default,
and ``python``): the median over rounds of the mean CPU time of this thread per
``Session.step`` [µs] (``time.thread_time_ns`` around each call, less the cost of
the two clock reads), with the spread of the rounds, and the share of steps that were
``running``.

CPU time, not wall time: on a shared machine the process is descheduled now and then,
which wall time would count. Caches shared with other processes still inflate single
rounds; the median of several rounds is the figure to quote.

    python bench/session_step.py [--rounds 9] [--steps 3000]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import posekit
from posekit.sessions.live.session import Session
from posekit.sessions.manager import SessionManager

TARGET_EVERY = 3
RADIUS = 0.05


def _target(session: Session, center: list[float], k: int) -> None:
    angle = 0.02 * k
    position = [
        center[0],
        center[1] + RADIUS * math.cos(angle),
        center[2] + RADIUS * math.sin(angle),
    ]
    session.set_target("ee", {"position": position})


def _clock_cost(reads: int = 20000) -> float:
    """ns of one ``thread_time_ns`` pair around nothing (the median of 5 batches)."""
    batches = []
    for _ in range(5):
        total = 0
        for _ in range(reads):
            began = time.thread_time_ns()
            total += time.thread_time_ns() - began
        batches.append(total / reads)
    return statistics.median(batches)


def _round(
    session: Session, center: list[float], steps: int, start: int, clock: float
) -> tuple[float, float]:
    """Mean CPU µs per step over ``steps`` steps, and the share of running steps."""
    elapsed = 0
    running = 0
    for i in range(steps):
        if i % TARGET_EVERY == 0:
            _target(session, center, start + i)
        began = time.thread_time_ns()
        state = session.step()
        elapsed += time.thread_time_ns() - began
        running += state.status == "running"
    return (elapsed / steps - clock) / 1e3, running / steps


def measure(engine: str, rounds: int, steps: int) -> None:
    previous = posekit.set_engine(engine)
    try:
        manager = SessionManager()
        session = manager.create({"robot": "arm7"})
        center = list(session.task("ee").target.position)  # type: ignore[union-attr]
        clock = _clock_cost()
        _round(session, center, 500, 0, clock)  # warm-up: kernels, plans, caches
        figures = [_round(session, center, steps, (r + 1) * steps, clock) for r in range(rounds)]
        times = sorted(f[0] for f in figures)
        share = statistics.mean(f[1] for f in figures)
        print(
            f"{engine:>8}: Session.step {statistics.median(times):6.1f} µs "
            f"(rounds {times[0]:.1f}-{times[-1]:.1f}), running {100 * share:.0f}%"
        )
        manager.delete(session.id)
    finally:
        posekit.set_engine(previous)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--steps", type=int, default=3000)
    arguments = parser.parse_args()
    for engine in ("compiled", "python"):
        measure(engine, arguments.rounds, arguments.steps)


if __name__ == "__main__":
    main()
