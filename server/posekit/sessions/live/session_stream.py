"""What a session's watchers see: its latest state, numbered, and the feed that carries
it and the ``tasks`` snapshots, reload reports and replies to them."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from posekit.sessions.live.feed import Feed
from posekit.sessions.live.state import SessionState, Status
from posekit.sessions.live.subscription import SignalBatch, Subscription
from posekit.sessions.live.tasks_snapshot import TasksSnapshot


class SessionStream:
    """A session's latest state and its watchers (the session's lock guards the writes).

    Attributes:
        ref: The ``ref`` of the latest target applied; echoed in the states after it.
    """

    def __init__(self) -> None:
        self.feed = Feed()
        self.ref: Any = None
        self._seq = 0
        self.state: SessionState | None = None

    def next_state(
        self,
        q: list[float],
        errors: dict[str, float | None],
        status: Status,
        revision: int,
        rate_hz: float,
        *,
        error: str | None = None,
        solve_us: float = 0.0,
        throttled: bool = False,
        limits: dict[str, list[str]] | None = None,
    ) -> SessionState:
        """Make the next state (sequence number + 1) the latest; it is not offered yet."""
        self._seq += 1
        self.state = SessionState(
            self._seq,
            time.time(),
            q,
            errors,
            status == "converged",
            status,
            error,
            round(solve_us, 1),
            self.ref,
            revision,
            throttled and status == "running",
            round(rate_hz, 2),
            limits or {},
        )
        return self.state

    def offer(self, state: SessionState, batch: SignalBatch | None = None) -> None:
        """Offer ``state`` to every watcher (into ``batch``, else at once)."""
        own = batch is None
        batch = batch or SignalBatch()
        self.feed.offer_state(state, batch)
        if own:
            batch.flush()

    def offer_tasks(self, snapshot: TasksSnapshot) -> None:
        self.feed.offer_tasks(snapshot)

    def broadcast(self, message: object) -> None:
        """Queue ``message`` (a protocol object) for every watcher."""
        self.feed.broadcast(message)

    def subscribe(self, loop: asyncio.AbstractEventLoop, initial_state: bool) -> Subscription:
        initial = self.state if initial_state else None
        return self.feed.subscribe(loop, initial)
