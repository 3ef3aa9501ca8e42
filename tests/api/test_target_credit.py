"""One target in flight per stream client (posekit.api.target_credit): applied at once
when the previous one is answered, else held, the latest per task winning."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import numpy as np
from posekit.api.target_credit import HOLD_PERIODS, TargetCredit
from posekit.sessions.kinds import Target
from support.servers import LiveServer
from support.streams import open_stream, recv


class FakeSession:
    """Records applied targets; each application is one revision."""

    def __init__(self, refuse: set[str] | None = None) -> None:
        self.applied: list[tuple[str, Any]] = []
        self.revision = 0
        self.refuse = refuse or set()

    def apply(self, task: str, target: Target, ref: Any) -> bool:
        if task in self.refuse:
            return False
        self.applied.append((task, ref))
        self.revision += 1
        return True


def _target(x: float) -> Target:
    return Target.model_construct(position=[x, 0.0, 0.0])


def _credit(session: FakeSession, hold_s: float = 10.0, **options: Any) -> TargetCredit:
    return TargetCredit(session.apply, lambda: session.revision, hold_s=hold_s, **options)


def _read(credit: TargetCredit, *targets: tuple[str, float, Any]) -> None:
    """One read of the client's socket: its targets offered, then settled."""
    for task, x, ref in targets:
        credit.offer(task, _target(x), ref)
    credit.settle()


class Reads:
    """The client's socket as the credit's ``hold`` sees it: whether it is read, and
    whether bytes were sent while it was not (``pending``)."""

    def __init__(self) -> None:
        self.calls: list[bool] = []
        self.pending = False

    def hold(self, held: bool) -> bool:
        self.calls.append(held)
        return not held and self.pending

    @property
    def held(self) -> bool:
        return bool(self.calls) and self.calls[-1]


def _holding(hold_s: float = 10.0) -> tuple[FakeSession, Reads, TargetCredit]:
    """A credit whose client sent target 1 (applied) and then 2 (waiting; reads held)."""
    session, reads = FakeSession(), Reads()
    credit = _credit(session, hold_s=hold_s, hold=reads.hold)
    _read(credit, ("ee", 0.1, 1))
    _read(credit, ("ee", 0.2, 2))
    return session, reads, credit


def test_a_target_waits_for_the_answer_to_the_previous_one_and_the_latest_per_task_wins() -> None:
    async def scenario() -> None:
        session = FakeSession()
        credit = _credit(session)
        _read(credit, ("ee", 0.1, 1))
        assert session.applied == [("ee", 1)]  # nothing in flight: at once
        _read(credit, ("ee", 0.2, 2))
        _read(credit, ("look", 0.5, 3))
        _read(credit, ("ee", 0.3, 4))  # replaces 2, keeps the order of tasks
        assert session.applied == [("ee", 1)] and credit.waiting == 2
        assert credit.superseded == 1
        credit.answered(0)  # an older state does not answer it
        assert credit.waiting == 2
        credit.answered(1)
        assert session.applied == [("ee", 1), ("look", 3), ("ee", 4)]
        assert credit.waiting == 0
        _read(credit, ("ee", 0.4, 5))  # awaits revision 3 now
        assert session.applied[-1] == ("ee", 4)
        credit.answered(3)
        assert session.applied[-1] == ("ee", 5)
        credit.close()

    asyncio.run(scenario())


def test_a_held_target_is_applied_when_the_answer_is_overdue() -> None:
    async def scenario() -> None:
        session = FakeSession()
        credit = _credit(session, hold_s=0.05)
        _read(credit, ("ee", 0.1, 1))
        _read(credit, ("ee", 0.2, 2))
        assert session.applied == [("ee", 1)]
        await asyncio.sleep(0.2)  # no state came (a paused session): the timer applies it
        assert session.applied == [("ee", 1), ("ee", 2)]
        credit.close()

    asyncio.run(scenario())


def test_a_session_stepped_slowly_gets_longer_to_answer() -> None:
    async def scenario() -> None:
        session, period = FakeSession(), [0.05]  # [s] the session's step period
        credit = TargetCredit(
            session.apply, lambda: session.revision, hold_s=0.01, period=lambda: period[0]
        )
        _read(credit, ("ee", 0.1, 1))  # overdue after HOLD_PERIODS periods: 0.2 s
        _read(credit, ("ee", 0.2, 2))
        time.sleep(0.1)  # past hold_s, within the periods: still held
        _read(credit, ("ee", 0.3, 3))
        assert session.applied == [("ee", 1)] and credit.superseded == 1
        while session.applied == [("ee", 1)]:
            await asyncio.sleep(0.01)  # the timer applies it once overdue
        assert session.applied == [("ee", 1), ("ee", 3)]
        period[0] = 0.0  # unknown: hold_s alone (read when a target is applied)
        credit.answered(session.revision)
        _read(credit, ("ee", 0.4, 4))
        time.sleep(0.02)
        _read(credit, ("ee", 0.5, 5))
        assert session.applied[-2:] == [("ee", 4), ("ee", 5)]
        credit.close()

    asyncio.run(asyncio.wait_for(scenario(), 5.0))
    assert HOLD_PERIODS * 0.05 > 0.1  # the held check above is within the periods


def test_an_overdue_target_takes_the_other_waiting_ones_with_it() -> None:
    async def scenario() -> None:
        session = FakeSession()
        credit = _credit(session, hold_s=0.05)
        _read(credit, ("ee", 0.1, 1))
        _read(credit, ("look", 0.2, 2))  # waits
        time.sleep(0.1)  # overdue, before the loop ran the timer
        _read(credit, ("ee", 0.3, 3))
        assert session.applied == [("ee", 1), ("look", 2), ("ee", 3)]
        assert credit.waiting == 0
        credit.close()

    asyncio.run(scenario())


def test_a_refused_target_leaves_nothing_to_wait_for() -> None:
    async def scenario() -> None:
        session = FakeSession(refuse={"nope"})
        credit = _credit(session)
        _read(credit, ("nope", 0.1, 1))
        _read(credit, ("ee", 0.2, 2))  # not held behind the refused one
        assert session.applied == [("ee", 2)]
        credit.close()

    asyncio.run(scenario())


def test_a_burst_of_targets_is_coalesced_and_the_last_one_lands(
    server: LiveServer, client: httpx.Client, arm: str
) -> None:
    before = client.get(f"/api/sessions/{arm}").json()["revision"]
    start = client.get(f"/api/sessions/{arm}/tasks/ee").json()["target"]["position"]
    burst = 60
    with open_stream(server, arm) as ws:
        assert recv(ws)["type"] == "hello"
        for i in range(burst):  # sent at once, faster than any state answers them
            position = np.add(start, [0.0, 0.002 * (i + 1), 0.0]).tolist()
            ws.send(json.dumps({"type": "target", "task": "ee", "position": position, "ref": i}))
        deadline = time.monotonic() + 10.0
        last: dict[str, Any] = {}
        while last.get("ref") != burst - 1 and time.monotonic() < deadline:
            message = recv(ws)
            if message["type"] == "state":
                last = message
            assert message["type"] != "error", message
    assert last.get("ref") == burst - 1  # the newest target is answered
    target = client.get(f"/api/sessions/{arm}/tasks/ee").json()["target"]["position"]
    assert np.allclose(target, np.add(start, [0.0, 0.002 * burst, 0.0]))
    applied = client.get(f"/api/sessions/{arm}").json()["revision"] - before
    assert 1 <= applied < burst  # superseded targets never became changes


def test_the_targets_of_one_read_are_applied_together_the_newest_per_task() -> None:
    async def scenario() -> None:
        session = FakeSession()
        credit = _credit(session)
        _read(credit, ("ee", 0.1, 1), ("ee", 0.2, 2), ("look", 0.3, 3))
        assert session.applied == [("ee", 2), ("look", 3)] and credit.superseded == 1
        _read(credit, ("ee", 0.4, 4), ("ee", 0.5, 5))  # one read, while the answer is due
        assert credit.waiting == 1 and credit.superseded == 2
        credit.answered(session.revision)
        assert session.applied[-1] == ("ee", 5)
        credit.close()

    asyncio.run(scenario())


def test_an_eager_clients_reads_are_held_until_each_answer_and_a_polite_ones_never() -> None:
    async def scenario() -> None:
        session, reads = FakeSession(), Reads()
        credit = _credit(session, hold=reads.hold)
        _read(credit, ("ee", 0.1, 1))
        assert reads.calls == []  # applied at once: nothing to hold for
        _read(credit, ("ee", 0.2, 2))  # sent while 1 is in flight: it waits, reads held
        assert reads.calls == [True] and credit.waiting == 1
        credit.answered(session.revision)  # nothing was sent meanwhile: 2 goes at once
        assert session.applied[-1] == ("ee", 2)
        assert reads.calls == [True, False, True]  # eager: held again until 2's answer
        credit.answered(session.revision)  # it sent nothing meanwhile: it keeps up now
        assert reads.calls == [True, False, True, False]
        _read(credit, ("ee", 0.3, 3))
        credit.answered(session.revision)
        _read(credit, ("ee", 0.4, 4))  # a polite client's targets: never held
        assert session.applied[-2:] == [("ee", 3), ("ee", 4)] and len(reads.calls) == 4
        credit.close()

    asyncio.run(scenario())


def test_after_a_hold_the_newest_target_sent_meanwhile_is_the_one_applied() -> None:
    async def scenario() -> None:
        session, reads, credit = _holding()  # 1 applied, 2 waiting, reads held
        reads.pending = True  # the client sends 3 and 4, which stay in the kernel
        credit.answered(session.revision)
        assert reads.calls == [True, False]
        assert session.applied == [("ee", 1)]  # not 2: what the client sent comes first
        _read(credit, ("ee", 0.3, 3), ("ee", 0.4, 4))  # the read that takes them
        assert session.applied == [("ee", 1), ("ee", 4)] and credit.superseded == 2
        assert credit.waiting == 0 and reads.calls == [True, False, True]
        credit.close()

    asyncio.run(scenario())


def test_targets_are_not_stranded_when_the_read_after_a_hold_never_comes() -> None:
    async def scenario() -> None:
        session, reads, credit = _holding(0.05)
        reads.pending = True
        credit.answered(session.revision)  # resumed, waiting for a read that never comes
        assert session.applied == [("ee", 1)]
        await asyncio.sleep(0.2)
        assert session.applied == [("ee", 1), ("ee", 2)]
        credit.close()

    asyncio.run(scenario())


def test_an_overdue_answer_ends_the_hold() -> None:
    async def scenario() -> None:
        session, reads, credit = _holding(0.05)
        assert reads.calls == [True]
        # No state comes (a paused session): the timer resumes reading and applies 2,
        # holds until its answer is overdue too, then resumes: nothing came meanwhile.
        await asyncio.sleep(0.3)
        assert reads.calls == [True, False, True, False] and session.applied[-1] == ("ee", 2)
        # Overdue again, now with bytes sent during the hold: they are read first.
        credit.answered(session.revision)
        _read(credit, ("ee", 0.3, 3))
        _read(credit, ("ee", 0.4, 4))
        reads.pending = True
        while len(reads.calls) < 6:  # until the timer resumes reading (before its backstop)
            await asyncio.sleep(0.002)
        assert reads.calls[4:] == [True, False] and session.applied[-1] == ("ee", 3)
        _read(credit, ("ee", 0.5, 5))  # overdue still: applied at the end of the read
        assert session.applied[-1] == ("ee", 5) and credit.waiting == 0
        credit.close()

    asyncio.run(scenario())
