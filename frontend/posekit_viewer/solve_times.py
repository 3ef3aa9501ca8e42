"""The solve time a viewer shows: the median of the recent steps it saw, and the last.

A session's first step is cold (caches, first QP) and a parked session publishes no
new step, so its last state's ``solve_us`` alone can stay a cold outlier for good. The
viewer keeps the solve times of the last ``WINDOW`` solved states it drew (paused and
failed states carry no solve) and shows their median next to the last one.
"""

from __future__ import annotations

import statistics
from collections import deque

from posekit.sessions.live.state import SessionState

WINDOW = 120  # solved steps: two seconds at 60 Hz


class SolveTimes:
    """Solve times [µs] of the recent solved states, one per step."""

    def __init__(self, window: int = WINDOW) -> None:
        self._times: deque[float] = deque(maxlen=window)
        self._seq = -1

    def record(self, state: SessionState) -> None:
        """Count a state's solve time once (states of a step seen again are skipped)."""
        solved = state.status in ("running", "converged") and state.solve_us > 0.0
        if state.seq == self._seq or not solved:  # a session's first state has no solve
            return
        self._seq = state.seq
        self._times.append(float(state.solve_us))

    @property
    def count(self) -> int:
        """How many steps the median is over."""
        return len(self._times)

    def median(self) -> float | None:
        """Median solve time [µs] of the recent steps (None before any)."""
        return statistics.median(self._times) if self._times else None

    def last(self) -> float | None:
        """Solve time [µs] of the last step (None before any)."""
        return self._times[-1] if self._times else None

    def text(self) -> str:
        """``median 95 µs of 120 steps · last 88 µs``, ``last step 6702 µs`` when one step
        was seen, or ``–`` before any."""
        median, last = self.median(), self.last()
        if median is None or last is None:
            return "–"
        if self.count == 1:
            return f"last step {last:.0f} µs"
        return f"median {median:.0f} µs of {self.count} steps · last {last:.0f} µs"
