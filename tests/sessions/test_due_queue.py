"""The scheduler's queue pops what a heap of ``(due, push counter, token, item)`` pops."""

from __future__ import annotations

import heapq
import random

from posekit.sessions.loops.due_queue import DueQueue


def test_entries_come_out_by_due_time_then_push_order() -> None:
    rng = random.Random(12)
    queue: DueQueue[str] = DueQueue()
    reference: list[tuple[float, int, int, str]] = []
    for counter in range(2000):
        if reference and rng.random() < 0.45:
            expected = heapq.heappop(reference)
            assert queue.head() == (expected[0], expected[2], expected[3])
            assert queue.pop() == (expected[0], expected[2], expected[3])
        else:
            due = rng.choice([0.0, -0.0, 1.0, 2.5]) if rng.random() < 0.5 else rng.random()
            token, item = rng.randrange(5), f"s{rng.randrange(40)}"
            queue.push(due, token, item)
            heapq.heappush(reference, (due, counter, token, item))
        assert len(queue) == len(reference)
        assert (queue.times[0] if queue.times else None) == (
            reference[0][0] if reference else None
        )
    while reference:
        expected = heapq.heappop(reference)
        assert queue.pop() == (expected[0], expected[2], expected[3])
    assert not queue.times and len(queue) == 0
