"""Latest-wins feeds of session updates for asyncio consumers (websockets, viewer).

A :class:`Subscription` holds at most one pending state, one pending ``tasks``
snapshot and a short ring of messages addressed to its consumer (errors); newer
states and snapshots replace older ones, so a slow consumer costs bounded memory.
Producers may run on any thread: they fill the slots and signal the consumer's loop
(batched per loop with :class:`SignalBatch`).

A consumer may also take states without waking up: with :meth:`Subscription.deliver_to`
it names a function that sends a state at once (or says it cannot). When a batch's
signal reaches the loop while the consumer waits in :meth:`Subscription.next` with only
a state pending — no message, no ``tasks`` snapshot, not woken yet — the state goes to
that function, on the loop; only when it declines is the consumer woken, as always. So
a state is handed over in the order of everything else, and a watcher costs no task
switch a state.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from posekit.sessions.state import SessionState
from posekit.sessions.tasks_snapshot import TasksSnapshot

logger = logging.getLogger(__name__)
MAX_MESSAGES = 16
Encoding = Literal["json", "binary"]


@dataclass
class Update:
    """What a consumer gets at once: messages first (in order), then the latest state."""

    messages: list[object] = field(default_factory=list)
    state: SessionState | None = None


class SignalBatch:
    """Collects subscriptions to signal, then signals them with one call per event loop
    (each gets its pending state straight to its direct sender, or is woken)."""

    def __init__(self) -> None:
        self._by_loop: dict[asyncio.AbstractEventLoop, list[Subscription]] = {}

    def add(self, subscription: Subscription) -> None:
        waiting = self._by_loop.get(subscription.loop)
        if waiting is None:  # no list made for nothing: a state per watcher comes here
            self._by_loop[subscription.loop] = [subscription]
        else:
            waiting.append(subscription)

    def flush(self, then: Callable[[], None] | None = None) -> None:
        """Signal every collected subscription (:meth:`Subscription.deliver`; thread-safe,
        one callback per loop).

        ``then`` is called once every loop has run the consumers it woke (their next
        step, e.g. sending the state), from the last such loop; at once when none.
        """
        batches, self._by_loop = self._by_loop, {}
        if then is None:
            for loop, subscriptions in batches.items():
                _call_in_loop(loop, _wake_all, subscriptions)
            return
        if not batches:
            then()
            return
        countdown = _Countdown(len(batches), then)
        for loop, subscriptions in batches.items():
            _call_in_loop(loop, _wake_all, subscriptions, countdown)


class _Countdown:
    """Calls ``then`` at the ``n``-th :meth:`tick` (ticks may come from several threads)."""

    def __init__(self, n: int, then: Callable[[], None]) -> None:
        self._left = n
        self._then = then
        self._lock = threading.Lock()

    def tick(self) -> None:
        with self._lock:
            self._left -= 1
            done = self._left == 0
        if done:
            self._then()


def _wake_all(subscriptions: list[Subscription], countdown: _Countdown | None = None) -> None:
    woken = False
    for subscription in subscriptions:
        woken |= subscription.deliver()
    if countdown is None:
        return
    if woken:  # after the consumers just woken have had their turn
        asyncio.get_running_loop().call_soon(countdown.tick)
    else:  # every state went out at once: nobody's turn to wait for
        countdown.tick()


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _call_in_loop(loop: asyncio.AbstractEventLoop, fn: Callable[..., None], *args: Any) -> None:
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        fn(*args)
        return
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:  # the loop is closed: nobody is listening any more
        pass


class Subscription:
    """One consumer's feed of a session; iterate it with ``async for update in sub``.

    Create it with :meth:`Session.subscribe` from the consumer's event loop; call
    :meth:`close` (or use it as a context manager) when done.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        on_close: Callable[[Subscription], None],
        encoding: Encoding | None = None,
    ) -> None:
        self.loop = loop
        self.encoding = encoding
        """How its consumer sends states (``json``, ``binary``; None: it reads the
        objects), so that the solver can encode them once, ahead."""
        self._on_close = on_close
        self._awake = False  # woken since the consumer last looked (an event's flag)
        self._waiter: asyncio.Future[None] | None = None
        self._state: SessionState | None = None
        self._tasks: TasksSnapshot | None = None
        self._messages: deque[object] = deque(maxlen=MAX_MESSAGES)
        self._signalled = False
        self._guard = threading.Lock()
        self._direct: Callable[[SessionState], bool] | None = None
        self._parked = False  # the consumer waits in next()
        self.closed = False
        self.close_reason: str | None = None

    def deliver_to(self, send: Callable[[SessionState], bool] | None) -> None:
        """States may go straight to ``send`` (called on the loop; True: it sent the
        state, False: it did not, the consumer is woken to take it) while the consumer
        waits in :meth:`next` with nothing else pending (module docstring); None: never."""
        self._direct = send

    # ------------------------------------------------------------- producers
    def offer_state(self, state: SessionState, batch: SignalBatch | None = None) -> None:
        """Replace the pending state (latest wins) and wake the consumer."""
        self._state = state
        if not self._signalled:  # what _signal does, one call fewer a state
            self._signalled = True
            if batch is not None:
                batch.add(self)
            else:
                _call_in_loop(self.loop, self.wake)

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
        self._signal(batch, force=True)

    def _signal(self, batch: SignalBatch | None, force: bool = False) -> None:
        if self._signalled and not force:
            return
        self._signalled = True
        if batch is not None:
            batch.add(self)
        else:
            _call_in_loop(self.loop, self.wake)

    def deliver(self) -> bool:
        """Hand the pending state to the consumer's direct sender when it may take it,
        else wake the consumer (call on its event loop, for a signal); whether it woke
        the consumer."""
        send = self._direct
        if (
            send is not None
            and self._parked
            and not self._awake
            and self._tasks is None
            and not self._messages
            and not self.closed
        ):
            self._signalled = False  # before taking: a later offer signals again
            state, self._state = self._state, None
            if state is None:
                return False
            self._parked = False  # a state offered while sending waits for the consumer
            try:
                if send(state):
                    return False
            except Exception:  # the consumer's own road meets the failure, in its task
                logger.exception("could not send a state at once")
            finally:
                self._parked = True
            if self._state is None:  # else a newer one came meanwhile: latest wins
                self._state = state
        self.wake()
        return True

    def wake(self) -> None:
        """Wake the consumer (call on its event loop)."""
        self._awake = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _woken(self) -> None:
        """Until :meth:`wake` is called (at once if it was since the consumer last looked).

        What an :class:`asyncio.Event` does for its one waiter, the consumer, without its
        bookkeeping for many (the stream waits once per state)."""
        if self._awake:
            return
        waiter = self._waiter
        if waiter is None or waiter.done():
            waiter = self._waiter = self.loop.create_future()
        await waiter

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
        loop = self.loop
        deadline = loop.time() + timeout
        while self._state is None and not self.closed:
            remaining = deadline - loop.time()
            if remaining <= 0.0:
                break
            self._signalled = False
            self._awake = False
            waiter = self._waiter
            if waiter is None or waiter.done():
                waiter = self._waiter = loop.create_future()
            # A timer resolving the waiter, not asyncio.wait_for: that makes a task and
            # cancels it on every timeout (a limited stream waits once per state).
            timer = loop.call_later(remaining, _resolve, waiter)
            try:
                await waiter
            finally:
                timer.cancel()
            if not self._awake:  # the timer, not wake(): timed out
                break
        return self.take_state()

    def _drain(self) -> Update:
        self._signalled = False
        messages: list[object] = []
        if self._messages:  # producers append under the guard, then signal
            with self._guard:
                messages = list(self._messages)
                self._messages.clear()
        tasks, self._tasks = self._tasks, None
        if tasks is not None:
            messages.append(tasks)
        return Update(messages, self.take_state())

    async def next(self) -> Update:
        """Wait for the next update; raises :class:`StopAsyncIteration` once ended."""
        while True:
            self._awake = False
            self._signalled = False  # before looking: a later offer signals again
            if self._state is not None or self._tasks is not None or self._messages:
                return self._drain()
            if self.closed:
                raise StopAsyncIteration
            self._parked = True
            try:
                await self._woken()
            finally:
                self._parked = False

    def __aiter__(self) -> Subscription:
        return self

    __anext__ = next  # one coroutine a step, not two (the stream's hot path)

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
