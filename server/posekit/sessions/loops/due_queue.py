"""A priority queue of scheduled steps, ordered by due time, then by push order.

What a heap of ``(due, counter, …)`` tuples gives, with float comparisons only: the
heap holds each distinct due time once, and each due time its entries in the order
they were pushed. Comparing two floats costs a fraction of comparing two tuples
(which first compares their first items for equality, then again for order), and a
queue of a hundred sessions compares about eight times a pop.
"""

from __future__ import annotations

import heapq
from collections import deque
from typing import Generic, TypeVar

T = TypeVar("T")


class DueQueue(Generic[T]):
    """Entries ``(due [s], token, item)``, popped in ``(due, push order)`` order.

    ``times`` is the heap of the distinct due times (``times[0]`` is the earliest; an
    empty list: no entry), read directly on hot paths.
    """

    __slots__ = ("_entries", "times")

    def __init__(self) -> None:
        self.times: list[float] = []
        self._entries: dict[float, deque[tuple[int, T]]] = {}

    def __len__(self) -> int:
        return sum(map(len, self._entries.values()))

    def push(self, due: float, token: int, item: T) -> None:
        """Add an entry, after every entry of the same due time."""
        waiting = self._entries.get(due)
        if waiting is None:
            self._entries[due] = deque(((token, item),))
            heapq.heappush(self.times, due)
        else:
            waiting.append((token, item))

    def head(self) -> tuple[float, int, T]:
        """The first entry (the queue must not be empty)."""
        due = self.times[0]
        token, item = self._entries[due][0]
        return due, token, item

    def pop(self) -> tuple[float, int, T]:
        """Remove and return the first entry (the queue must not be empty)."""
        due = self.times[0]
        waiting = self._entries[due]
        token, item = waiting.popleft()
        if not waiting:
            heapq.heappop(self.times)
            del self._entries[due]
        return due, token, item
