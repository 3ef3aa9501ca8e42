"""The subscribers of one session: latest-wins :class:`Subscription` s, offered every
new state and every ``tasks`` snapshot, ended when the session closes."""

from __future__ import annotations

import asyncio
import threading

from posekit.sessions.live.state import SessionState
from posekit.sessions.live.subscription import SignalBatch, Subscription
from posekit.sessions.live.tasks_snapshot import TasksSnapshot


class Feed:
    """Thread-safe fan-out to a session's subscriptions."""

    def __init__(self) -> None:
        self._subscribers: list[Subscription] = []
        self._lock = threading.Lock()
        self._ended: str | None = None

    def __len__(self) -> int:
        return len(self._subscribers)

    def backlog(self) -> int:
        """The most updates any subscription holds (bounded: one state, one ``tasks``
        snapshot and a short ring of messages)."""
        return max((s.pending() for s in self._subscribers), default=0)

    def subscribe(
        self,
        loop: asyncio.AbstractEventLoop,
        initial: SessionState | None,
    ) -> Subscription:
        """A new subscription (already ended when the feed is), offered ``initial``."""
        subscription = Subscription(loop, self._unsubscribe)
        with self._lock:
            if self._ended is not None:
                subscription.end(self._ended)
            else:
                self._subscribers = [*self._subscribers, subscription]
        if initial is not None:
            subscription.offer_state(initial)
        return subscription

    def offer_state(self, state: SessionState, batch: SignalBatch) -> None:
        for subscription in self._subscribers:
            subscription.offer_state(state, batch)

    def offer_tasks(self, snapshot: TasksSnapshot) -> None:
        for subscription in self._subscribers:
            subscription.offer_tasks(snapshot)

    def broadcast(self, message: object) -> None:
        """Queue ``message`` (a protocol object) for every subscription."""
        batch = SignalBatch()
        for subscription in self._subscribers:
            subscription.offer_message(message, batch)
        batch.flush()

    def end(self, reason: str) -> None:
        """End every subscription, and every later one, with ``reason``."""
        with self._lock:
            self._ended = reason
            subscribers, self._subscribers = self._subscribers, []
        for subscription in subscribers:
            subscription.end(reason)

    def _unsubscribe(self, subscription: Subscription) -> None:
        with self._lock:
            self._subscribers = [s for s in self._subscribers if s is not subscription]
