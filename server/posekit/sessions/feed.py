"""The subscribers of one session: latest-wins :class:`Subscription` s, offered every
new state and every ``tasks`` snapshot, ended when the session closes. The feed knows
which encodings its subscribers send states in, and says when that set changes."""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable

from posekit.sessions.state import SessionState
from posekit.sessions.subscription import Encoding, SignalBatch, Subscription
from posekit.sessions.tasks_snapshot import TasksSnapshot


class Feed:
    """Thread-safe fan-out to a session's subscriptions.

    Args:
        on_encodings: A bound method called with the set of encodings the subscribers
            use whenever it changes (a subscriber of a new encoding came, the last of one
            left). Held weakly: the feed does not keep its owner alive.
    """

    def __init__(self, on_encodings: Callable[[frozenset[str]], None] | None = None) -> None:
        self._subscribers: list[Subscription] = []
        self._lock = threading.Lock()
        self._ended: str | None = None
        self._on_encodings = weakref.WeakMethod(on_encodings) if on_encodings else None
        self._encodings: frozenset[str] = frozenset()

    def __len__(self) -> int:
        return len(self._subscribers)

    def backlog(self) -> int:
        """The most updates any subscription holds (bounded: one state, one ``tasks``
        snapshot and a short ring of messages)."""
        return max((s.pending() for s in self._subscribers), default=0)

    @property
    def encodings(self) -> frozenset[str]:
        """The encodings the subscribers send states in."""
        return self._encodings

    def subscribe(
        self,
        loop: asyncio.AbstractEventLoop,
        initial: SessionState | None,
        encoding: Encoding | None = None,
    ) -> Subscription:
        """A new subscription (already ended when the feed is), offered ``initial``."""
        subscription = Subscription(loop, self._unsubscribe, encoding)
        with self._lock:
            if self._ended is not None:
                subscription.end(self._ended)
            else:
                self._subscribers = [*self._subscribers, subscription]
        self._encodings_changed()
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
        self._encodings_changed()

    def _encodings_changed(self) -> None:
        with self._lock:
            encodings = frozenset(s.encoding for s in self._subscribers if s.encoding)
            changed, self._encodings = encodings != self._encodings, encodings
        callback = self._on_encodings() if self._on_encodings is not None else None
        if changed and callback is not None:
            callback(encodings)
