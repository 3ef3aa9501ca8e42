"""Backpressure from the server process to a solver process (batch_credit), and the
event-loop callback that gives the credit back once watchers had their turn."""

from __future__ import annotations

import asyncio
import time

from posekit.demo import builtin_model
from posekit.sessions import Session, SessionSpec
from posekit.sessions.loops.batch_credit import BatchCredit
from posekit.sessions.subscription import SignalBatch


def test_passes_wait_while_the_limit_of_batches_is_unanswered() -> None:
    credit = BatchCredit(limit=2, timeout_s=10.0)
    assert credit.wait_s() == 0.0
    credit.sent()
    assert credit.wait_s() == 0.0
    credit.sent()
    assert 9.0 < credit.wait_s() <= 10.0  # held: two in flight
    credit.answered()
    assert credit.wait_s() == 0.0 and credit.in_flight == 1
    credit.answered()
    credit.answered()  # a stray answer (a restarted process) never goes below zero
    assert credit.in_flight == 0


def test_an_overdue_answer_releases_the_credit() -> None:
    credit = BatchCredit(limit=1, timeout_s=0.05)
    credit.sent()
    assert credit.wait_s() > 0.0
    time.sleep(0.1)
    assert credit.wait_s() == 0.0 and credit.in_flight == 0


def _arm7_session() -> Session:
    model = builtin_model("arm7")
    return Session("t", SessionSpec(robot="arm7", q=model.key_qpos[0].tolist()), model, "arm7")


def test_the_credit_comes_back_after_the_woken_watchers_ran() -> None:
    arm7_session = _arm7_session()

    async def scenario() -> list[str]:
        events: list[str] = []
        subscription = arm7_session.subscribe(initial_state=False)

        async def watcher() -> None:
            async for _update in subscription:
                events.append("sent")
                return

        task = asyncio.create_task(watcher())
        await asyncio.sleep(0)  # the watcher waits for its first update
        batch = SignalBatch()
        done = asyncio.Event()

        def then() -> None:
            events.append("credit")
            done.set()

        # From another thread, as the server process's reader does.
        await asyncio.to_thread(lambda: (arm7_session.step(batch), batch.flush(then=then)))
        await asyncio.wait_for(done.wait(), 5.0)
        await task
        subscription.close()
        return events

    assert asyncio.run(scenario()) == ["sent", "credit"]


def test_with_nobody_to_wake_the_credit_comes_back_at_once() -> None:
    called: list[bool] = []
    SignalBatch().flush(then=lambda: called.append(True))
    assert called == [True]


def test_when_every_state_went_out_at_once_the_credit_comes_back_in_the_same_call() -> None:
    """States handed to a watcher's direct sender wake nobody: the credit does not wait
    for a turn of the loop (past saturation each turn reads many clients' messages)."""
    arm7_session = _arm7_session()

    async def scenario() -> list[str]:
        events: list[str] = []
        subscription = arm7_session.subscribe(initial_state=False)
        subscription.deliver_to(lambda state: events.append("sent at once") is None)
        waiting = asyncio.create_task(subscription.next())
        await asyncio.sleep(0)  # the watcher waits (parked) for its next update
        batch = SignalBatch()
        arm7_session.step(batch)
        batch.flush(then=lambda: events.append("credit"))  # on the loop, as the reader
        observed = list(events)  # before any other callback of the loop ran
        waiting.cancel()
        subscription.close()
        return observed

    assert asyncio.run(scenario()) == ["sent at once", "credit"]
