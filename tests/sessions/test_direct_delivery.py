"""States handed straight to a waiting consumer's sender (Subscription.deliver_to): only
when the consumer waits with nothing else pending, latest wins, and a declined state
reaches the consumer as always."""

from __future__ import annotations

import asyncio

from posekit.sessions.state import SessionState
from posekit.sessions.subscription import SignalBatch, Subscription
from support.states import running_state


class Sender:
    """A direct sender that takes states while ``accept`` is true."""

    def __init__(self, accept: bool = True) -> None:
        self.accept = accept
        self.sent: list[int] = []

    def __call__(self, state: SessionState) -> bool:
        if self.accept:
            self.sent.append(state.seq)
        return self.accept


def _offer(subscription: Subscription, *states: SessionState) -> None:
    """States offered as a solve loop does: in a batch, signalled once."""
    batch = SignalBatch()
    for state in states:
        subscription.offer_state(state, batch)
    batch.flush()


async def _waiting(subscription: Subscription) -> asyncio.Task[object]:
    """A consumer waiting in ``next()``."""
    consumer = asyncio.create_task(subscription.next())
    await asyncio.sleep(0)
    assert not consumer.done()
    return consumer


def test_a_state_goes_to_the_sender_without_waking_the_consumer() -> None:
    async def scenario() -> None:
        subscription = Subscription(asyncio.get_running_loop(), lambda s: None)
        sender = Sender()
        subscription.deliver_to(sender)
        consumer = await _waiting(subscription)
        _offer(subscription, running_state(1), running_state(2))  # latest wins
        _offer(subscription, running_state(3))
        await asyncio.sleep(0.01)
        assert sender.sent == [2, 3]
        assert not consumer.done() and subscription.pending() == 0
        consumer.cancel()

    asyncio.run(scenario())


def test_a_declined_state_reaches_the_consumer() -> None:
    async def scenario() -> None:
        subscription = Subscription(asyncio.get_running_loop(), lambda s: None)
        subscription.deliver_to(Sender(accept=False))
        consumer = await _waiting(subscription)
        _offer(subscription, running_state(7))
        update = await asyncio.wait_for(consumer, 5.0)
        assert update.state is not None and update.state.seq == 7  # type: ignore[attr-defined]

    asyncio.run(scenario())


def test_queued_messages_go_first_and_the_state_after_them() -> None:
    async def scenario() -> None:
        subscription = Subscription(asyncio.get_running_loop(), lambda s: None)
        sender = Sender()
        subscription.deliver_to(sender)
        consumer = await _waiting(subscription)
        subscription.offer_message("error first")
        _offer(subscription, running_state(4))
        update = await asyncio.wait_for(consumer, 5.0)
        assert sender.sent == []  # the state waited for the message before it
        assert update.messages == ["error first"]  # type: ignore[attr-defined]
        assert update.state is not None and update.state.seq == 4  # type: ignore[attr-defined]

    asyncio.run(scenario())


def test_no_state_goes_directly_while_the_consumer_is_busy() -> None:
    async def scenario() -> None:
        subscription = Subscription(asyncio.get_running_loop(), lambda s: None)
        sender = Sender()
        subscription.deliver_to(sender)
        _offer(subscription, running_state(5))  # nobody waits in next(): e.g. mid-send
        assert sender.sent == [] and subscription.pending() == 1
        update = await subscription.next()
        assert update.state is not None and update.state.seq == 5
        subscription.deliver_to(None)
        consumer = await _waiting(subscription)
        _offer(subscription, running_state(6))  # no sender any more
        update = await asyncio.wait_for(consumer, 5.0)
        assert sender.sent == [] and update.state.seq == 6  # type: ignore[attr-defined]

    asyncio.run(scenario())


def test_a_closed_subscription_sends_nothing_directly() -> None:
    async def scenario() -> None:
        subscription = Subscription(asyncio.get_running_loop(), lambda s: None)
        sender = Sender()
        subscription.deliver_to(sender)
        consumer = await _waiting(subscription)
        subscription.end("bye")
        _offer(subscription, running_state(8))
        await asyncio.sleep(0.01)
        assert sender.sent == []
        await asyncio.wait_for(consumer, 5.0)  # it drains the last state, then ends

    asyncio.run(scenario())


def test_a_state_offered_while_one_is_sent_does_not_overtake_it() -> None:
    async def scenario() -> None:
        subscription = Subscription(asyncio.get_running_loop(), lambda s: None)
        sent: list[int] = []

        def send(state: SessionState) -> bool:  # e.g. the credit applies a target
            if state.seq == 1:
                _offer(subscription, running_state(2))  # signalled on this loop, at once
            sent.append(state.seq)
            return True

        subscription.deliver_to(send)
        consumer = await _waiting(subscription)
        _offer(subscription, running_state(1))
        update = await asyncio.wait_for(consumer, 5.0)
        assert sent == [1]  # the newer one went to the consumer, after it
        assert update.state is not None and update.state.seq == 2  # type: ignore[attr-defined]

    asyncio.run(scenario())


def test_a_sender_that_fails_leaves_the_state_to_the_consumer() -> None:
    async def scenario() -> None:
        subscription = Subscription(asyncio.get_running_loop(), lambda s: None)

        def send(state: SessionState) -> bool:
            raise RuntimeError("broken")

        subscription.deliver_to(send)
        consumer = await _waiting(subscription)
        _offer(subscription, running_state(3))
        update = await asyncio.wait_for(consumer, 5.0)
        assert update.state is not None and update.state.seq == 3  # type: ignore[attr-defined]

    asyncio.run(scenario())
