"""Backpressure from the server process to a solver process: batches of states in flight.

A solver process sends the states of each pass as one :class:`~.messages.States` batch,
or a few when the pass publishes its answers to changes early (the scheduler's "answers
first"); the server process answers each batch with :class:`~.messages.Consumed` once its event
loop has woken every watcher of those states and they have had their turn to send them.
The solver process starts a new pass only while fewer than ``limit`` batches are
unanswered. So when the server process falls behind — many watchers, a slow network —
the solver steps its sessions only as fast as their states are sent: no step is
computed only to be superseded before anyone sees it, and the CPU it would have taken
goes to sending. Sessions then slow down evenly (their due times slide).

An answer that does not come within ``timeout_s`` (a server process wedged or gone)
releases the credit, so the solver process never waits forever.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

LIMIT = 4
"""Batches of states a solver process may have unanswered. Each answer takes a turn of
the server process's event loop, which past saturation is long (many watchers, many
client messages): with two, the solver process waited for answers with CPU to spare."""
TIMEOUT_S = 0.5
"""[s] After this long without an answer, the oldest batch counts as answered."""


@dataclass
class BatchCredit:
    """Unanswered batches of one solver process (module docstring)."""

    limit: int = LIMIT
    timeout_s: float = TIMEOUT_S
    in_flight: int = 0
    waited: int = 0
    """Times a pass was held back for want of credit."""
    _since: float = field(default=0.0, repr=False)  # [s, monotonic] last send or answer

    def sent(self) -> None:
        """A batch went out."""
        if self.in_flight == 0:
            self._since = time.monotonic()
        self.in_flight += 1

    def answered(self) -> None:
        """The server process consumed the oldest batch."""
        self.in_flight = max(0, self.in_flight - 1)
        self._since = time.monotonic()

    def wait_s(self) -> float:
        """0 when a pass may start now; else the seconds to wait for an answer at most."""
        if self.in_flight < self.limit:
            return 0.0
        left = self._since + self.timeout_s - time.monotonic()
        if left <= 0.0:
            self.answered()  # overdue: never wait forever
            return 0.0
        return left
