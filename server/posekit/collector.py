r"""The cyclic garbage collector of posekit's long-running server (``posekit up``):
young collections every
:data:`YOUNG_THRESHOLD` tracked allocations instead of CPython's 700.

CPython collects its youngest generation when the tracked containers (lists, dicts,
class instances…) allocated and not yet freed since the last collection exceed the
first threshold; an object alive at two collections moves to the next generation, and
the oldest generation is collected in full whenever the objects promoted into it since
the last full collection exceed a quarter of those that survived it. A live session's
newest state (its ``q`` list, its :class:`~posekit.sessions.live.state.SessionState`) lives from one step to the next: 17 ms at 60 Hz, about
70 ms past saturation. At thousands of states a second a threshold of 700 collects
every few milliseconds, so nearly every state outlives two collections and dies in the
oldest generation, and its promotion brings the next full collection nearer: a full
scan of every object the process holds (half a million with 800 sessions).

Measured with ``bench/server_load.py`` at 800 eager arm7 sessions (a probe timing each
collection, 8.5 s of the run): the server process ran 737 young, 68 middle and **6
full collections**, which took 0.23, 0.19 and 1.5 s: 1.9 s of its 8.5, about a quarter
of a core. With young collections every 20,000
allocations the server ran a full collection during the run (the server process 18
young collections and one middle one in all, 0.11 s). With the probe on, the sessions got
15.7k states/s in all against 12.7k-13.2k (two interleaved runs each); without it, in the
README's load runs, the totals stayed within their run-to-run noise while the p95 latency
at 800 sessions halved (117-168 ms against 309-318). The price is a young collection
that finds more survivors (3-4 ms instead of 0.2-0.3; 50,000 gave the same totals with
7-9 ms pauses) and cyclic garbage kept a little longer: objects without cycles are still
freed at once by reference counting.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 20_000
"""Tracked allocations (net of those freed) between two young collections."""


def tune_collector(young: int = YOUNG_THRESHOLD) -> None:
    """Collect the youngest generation every ``young`` net tracked allocations, keeping
    CPython's thresholds of the older generations (call it as the process starts)."""
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(young, middle, oldest)
