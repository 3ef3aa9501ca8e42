"""The stream's state sender: a state written at once obeys the same rules as one the
writer sends — the rate limit with bursts of two, states answering a change never held
back, the credit told of every state, nothing written while the client does not read."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from posekit.api.state_sender import StateSender
from posekit.sessions.subscription import Subscription
from posekit.ws_protocol import SEND_NOW
from support.states import running_state


class Socket:
    """A websocket whose connection takes frames at once while ``writable``."""

    def __init__(self, send_now: bool = True) -> None:
        self.writable = True
        self.frames: list[tuple[bytes, bool]] = []
        self.asgi: list[dict[str, Any]] = []
        self.scope: dict[str, Any] = {"extensions": {SEND_NOW: self.send_now} if send_now else {}}

    def send_now(self, payload: bytes, binary: bool) -> bool:
        if self.writable:
            self.frames.append((payload, binary))
        return self.writable

    async def send(self, message: dict[str, Any]) -> None:
        self.asgi.append(message)


class Credit:
    def __init__(self) -> None:
        self.answered_revisions: list[int] = []

    def answered(self, revision: int) -> None:
        self.answered_revisions.append(revision)


def _sender(
    socket: Socket, stream_hz: float, binary: bool = False, rate_hz: float = 240.0
) -> tuple[StateSender, Credit]:
    """A sender for a session solving at ``rate_hz`` (by default faster than it streams:
    the rate limit applies)."""
    solver = SimpleNamespace(stream_hz=stream_hz, rate_hz=rate_hz)
    session = SimpleNamespace(solver=solver, revision=0)
    credit = Credit()
    return StateSender(socket, session, credit, binary=binary), credit  # type: ignore[arg-type]


def test_states_written_at_once_keep_the_rate_limit_and_its_bursts() -> None:
    socket = Socket()
    sender, credit = _sender(socket, stream_hz=1.0)
    assert [sender.offer(running_state(seq)) for seq in (1, 2, 3)] == [True, True, False]
    assert [payload for payload, _ in socket.frames] == [
        running_state(1).json_bytes(),
        running_state(2).json_bytes(),
    ]
    assert credit.answered_revisions == [0, 0, 0]  # told of each, sent or not


def test_a_state_answering_a_change_is_never_held_back() -> None:
    socket = Socket()
    sender, _ = _sender(socket, stream_hz=1.0)
    assert sender.offer(running_state(1)) and sender.offer(running_state(2))
    assert not sender.offer(running_state(3))  # the bucket is empty
    assert sender.offer(running_state(4, revision=1))  # answers a change: at once
    assert not sender.offer(running_state(5, revision=1))  # the next regular one waits longer
    assert len(socket.frames) == 3


def test_nothing_is_written_while_the_client_does_not_read() -> None:
    async def scenario() -> None:
        socket = Socket()
        sender, _ = _sender(socket, stream_hz=240.0, binary=True)
        socket.writable = False  # the transport paused writing (flow control)
        state = running_state(1)
        assert not sender.offer(state) and socket.frames == []
        assert sender.bucket.tokens == 2.0  # no token spent on it
        subscription = Subscription(asyncio.get_running_loop(), lambda s: None)
        await sender.send(state, subscription)  # the writer's road: ASGI, which waits
        assert socket.asgi == [{"type": "websocket.send", "bytes": state.binary()}]
        socket.writable = True
        await sender.send(running_state(2), subscription)  # written at once again
        assert socket.frames == [(running_state(2).binary(), True)]

    asyncio.run(scenario())


def test_without_the_extension_states_go_through_asgi() -> None:
    async def scenario() -> None:
        socket = Socket(send_now=False)  # another websocket implementation
        sender, _ = _sender(socket, stream_hz=240.0)
        assert not sender.offer(running_state(1))
        subscription = Subscription(asyncio.get_running_loop(), lambda s: None)
        await sender.send(running_state(1), subscription)
        assert socket.asgi == [{"type": "websocket.send", "text": running_state(1).json()}]

    asyncio.run(scenario())


def test_a_session_solving_no_faster_than_it_streams_sends_every_state() -> None:
    socket = Socket()
    sender, credit = _sender(socket, stream_hz=60.0, rate_hz=60.0)
    sender.bucket.tokens = 0.0  # a limited sender would hold every state back
    assert all(sender.offer(running_state(seq)) for seq in range(1, 6))
    assert len(socket.frames) == 5 and credit.answered_revisions == [0] * 5
    assert sender.bucket.tokens == 0.0  # the bucket is not used: no token taken


def test_the_writer_does_not_wait_for_a_token_when_the_solve_is_no_faster() -> None:
    async def scenario() -> None:
        socket = Socket()
        sender, _ = _sender(socket, stream_hz=1.0, rate_hz=1.0)
        sender.bucket.tokens = 0.0  # a limited writer would wait a second
        subscription = Subscription(asyncio.get_running_loop(), lambda s: None)
        writing = sender.send(running_state(1), subscription).__await__()
        try:
            next(writing)  # runs until it suspends, or to its end
        except StopIteration:
            pass
        else:
            raise AssertionError("the writer waited")
        assert socket.frames == [(running_state(1).json_bytes(), False)]

    asyncio.run(scenario())


def test_a_solve_made_faster_than_the_stream_is_limited_again() -> None:
    solver = SimpleNamespace(stream_hz=1.0, rate_hz=1.0)
    session = SimpleNamespace(solver=solver, revision=0)
    sender = StateSender(Socket(), session, Credit(), binary=False)  # type: ignore[arg-type]
    assert all(sender.offer(running_state(seq)) for seq in (1, 2, 3))  # no limit
    solver.rate_hz = 10.0
    assert [sender.offer(running_state(seq)) for seq in (4, 5, 6)] == [True, True, False]
