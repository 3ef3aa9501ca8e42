"""The cadence grid: the sessions of one rate step at the same instants.

A session's next cadence step, due one period after the one before, is moved up to the
next multiple of its period on the monotonic clock (:func:`on_grid`; by less than a
period, once after its first step, after a change step that replaced no cadence step, or
after a cadence step taken more than a period late, which is rescheduled from its own
time; a late change step keeps its session's place in the line of late cadence steps,
off the grid: the scheduler's module docstring). So
the sessions of one rate are due at the same instants, and a pass of the
:class:`~posekit.sessions.loops.scheduler.Scheduler` steps all of them at once instead of
the few whose arbitrary phases fall within its lookahead of each other: the costs paid
per pass rather than per step — waking the thread, reading its CPU clock, pickling,
writing and reading the batch, waking the server process's event loop and answering the
batch — are shared by the pass's states, and no state comes before its time. A change is
still stepped at once, off the grid (its step replaces the cadence step, whose grid time
the cadence goes on from); a throttled session keeps its fair share's spacing.
"""

from __future__ import annotations

import math

# A due time this close to a multiple of the period, in periods, counts as on it.
GRID_SLACK = 1e-6


def on_grid(due: float, period: float) -> float:
    """The first multiple of ``period`` at or after ``due`` [s, monotonic]:
    :math:`\\lceil t / T - \\epsilon \\rceil\\,T` with :math:`\\epsilon` = ``GRID_SLACK``."""
    return math.ceil(due / period - GRID_SLACK) * period


def next_due(at: float, replaced: float | None, period: float, grid: bool, now: float) -> float:
    """When a session stepped at ``now`` [s, monotonic] for a step due at ``at`` is next
    due for a cadence step, every ``period`` seconds (``grid``: on its period's grid;
    ``replaced``: for a change step, when the cadence step it took the place of was due).

    A change step takes the place of the cadence step it came before: the cadence goes
    on from that step's due time, so changes do not add steps; when that is past (the
    loop is behind), the session keeps its place in the line of late cadence steps, a
    period on. A late cadence step, or a change step that replaced none, goes to the
    back of the line: due ``now``.
    """
    due = (at if replaced is None else replaced) + period
    if grid:
        due = on_grid(due, period)
    return now if due <= now and replaced is None else due
