"""Latest-wins feeds of session updates for asyncio consumers (websockets, viewer).

A :class:`Subscription` holds at most one pending state, one pending ``tasks``
snapshot and a short ring of messages addressed to its consumer (errors); newer
states and snapshots replace older ones, so a slow consumer costs bounded memory.
Producers may run on any thread: they fill the slots and wake the consumer's event loop,
once per loop for a whole round of states (:class:`SignalBatch`).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from posekit.sessions.live.state import SessionState
from posekit.sessions.live.tasks_snapshot import TasksSnapshot

MAX_MESSAGES = 16


@dataclass
class Update:
    """What a consumer gets at once: messages first (in order), then the latest state."""

    messages: list[object] = field(default_factory=list)
    state: SessionState | None = None


class SignalBatch:
    """Collects subscriptions to wake, then wakes them with one call per event loop."""

    def __init__(self) -> None:
        self._by_loop: dict[asyncio.AbstractEventLoop, list[Subscription]] = {}

    def add(self, subscription: Subscription) -> None:
        self._by_loop.setdefault(subscription.loop, []).append(subscription)

    def flush(self) -> None:
        """Wake every collected subscription (thread-safe)."""
        batches, self._by_loop = self._by_loop, {}
        for loop, subscriptions in batches.items():
            _call_in_loop(loop, _wake_all, subscriptions)


def _wake_all(subscriptions: list[Subscription]) -> None:
    for subscription in subscriptions:
        subscription.wake()


def _call_in_loop(loop: asyncio.AbstractEventLoop, fn: Callable[..., None], *args: object) -> None:
    """``fn(*args)`` on ``loop``: now when called on it, else soon (nothing when closed)."""
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        fn(*args)
        return
    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody listens any more
        loop.call_soon_threadsafe(fn, *args)


class Subscription:
    """One consumer's feed of a session; iterate it with ``async for update in sub``.

    Create it with :meth:`Session.subscribe` from the consumer's event loop; call
    :meth:`close` (or use it as a context manager) when done.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        on_close: Callable[[Subscription], None],
    ) -> None:
        self.loop = loop
        self._on_close = on_close
        self._woken = asyncio.Event()  # set on the loop only
        self._state: SessionState | None = None
        self._tasks: TasksSnapshot | None = None
        self._messages: deque[object] = deque(maxlen=MAX_MESSAGES)
        self._signalled = False  # a wake-up is on its way: no need for another
        self._guard = threading.Lock()
        self.closed = False
        self.close_reason: str | None = None

    # ------------------------------------------------------------- producers
    def offer_state(self, state: SessionState, batch: SignalBatch | None = None) -> None:
        """Replace the pending state (latest wins) and wake the consumer."""
        self._state = state
        self._signal(batch)

    def offer_tasks(self, snapshot: TasksSnapshot, batch: SignalBatch | None = None) -> None:
        """Replace the pending ``tasks`` snapshot and wake the consumer."""
        self._tasks = snapshot
        self._signal(batch)

    def offer_message(self, message: object, batch: SignalBatch | None = None) -> None:
        """Queue a message (a protocol object) for this consumer only (the oldest is
        dropped beyond 16)."""
        with self._guard:
            self._messages.append(message)
        self._signal(batch)

    def end(self, reason: str, batch: SignalBatch | None = None) -> None:
        """End the feed from the producer side (e.g. the session was deleted)."""
        self.close_reason = reason
        self.closed = True
        self._signalled = False
        self._signal(batch)

    def _signal(self, batch: SignalBatch | None) -> None:
        if self._signalled:
            return
        self._signalled = True
        if batch is not None:
            batch.add(self)
        else:
            _call_in_loop(self.loop, self.wake)

    def wake(self) -> None:
        """Wake the consumer (call on its event loop)."""
        self._woken.set()

    # -------------------------------------------------------------- consumer
    def pending(self) -> int:
        """Number of items waiting (at most 2 + 16)."""
        return (self._state is not None) + (self._tasks is not None) + len(self._messages)

    def take_state(self) -> SessionState | None:
        """The pending state, if any, removing it."""
        state, self._state = self._state, None
        return state

    async def newer_state(self, timeout: float) -> SessionState | None:
        """Wait at most ``timeout`` seconds for a state; returns it (removed) or None.

        Returns at once when a state is pending or the feed has ended; other items stay
        queued for :meth:`next`.
        """
        deadline = self.loop.time() + timeout
        while self._state is None and not self.closed:
            remaining = deadline - self.loop.time()
            if remaining <= 0.0:
                break
            self._rearm()
            if self._state is None:
                try:
                    await asyncio.wait_for(self._woken.wait(), remaining)
                except TimeoutError:  # ends the wait, whatever a coarse loop clock says
                    break
        return self.take_state()

    def _rearm(self) -> None:
        """Before looking at the slots: a later offer wakes the consumer again."""
        self._woken.clear()
        self._signalled = False

    def _drain(self) -> Update:
        with self._guard:  # producers append under the guard, then signal
            messages: list[object] = list(self._messages)
            self._messages.clear()
        tasks, self._tasks = self._tasks, None
        if tasks is not None:
            messages.append(tasks)
        return Update(messages, self.take_state())

    async def next(self) -> Update:
        """Wait for the next update; raises :class:`StopAsyncIteration` once ended."""
        while True:
            self._rearm()
            if self._state is not None or self._tasks is not None or self._messages:
                return self._drain()
            if self.closed:
                raise StopAsyncIteration
            await self._woken.wait()

    def __aiter__(self) -> Subscription:
        return self

    __anext__ = next

    def close(self) -> None:
        """Stop receiving updates (idempotent)."""
        if not self.closed:
            self.closed = True
            self.close_reason = self.close_reason or "closed"
        self._on_close(self)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
