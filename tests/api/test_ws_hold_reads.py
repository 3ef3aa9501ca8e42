"""posekit.ws_protocol's ``hold_reads`` and ``receive_now``'s ``done`` (what the stream's
target credit leaves a client's bytes in the kernel with): the socket is read only when
neither the app nor uvicorn holds it, resuming tells whether bytes wait, the close
handshake lifts the hold, and ``done`` follows each read's messages."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from posekit.ws_protocol import HOLD_READS, RECEIVE_NOW, PosekitWebSocketProtocol
from support.ws_protocols import masked, opened

TEXT = 0x81
PING = 0x89


def _close(protocol: Any) -> None:
    for task in list(protocol.tasks):
        task.cancel()


def test_resuming_tells_whether_the_client_sent_bytes_meanwhile() -> None:
    async def scenario() -> list[Any]:
        opening = await opened(PosekitWebSocketProtocol)
        hold = opening.scope["extensions"][HOLD_READS]
        ours, peer = socket.socketpair()
        opening.transport.sock = ours
        seen: list[Any] = [hold(True), opening.transport.calls[-1]]
        seen += [hold(False), opening.transport.calls[-1]]  # nothing was sent
        hold(True)
        peer.send(masked(TEXT, b"late"))
        seen += [hold(False), opening.transport.calls[-1]]
        ours.close()
        peer.close()
        _close(opening.protocol)
        return seen

    assert asyncio.run(scenario()) == [False, "pause", False, "resume", True, "resume"]


def test_done_follows_the_messages_of_each_read() -> None:
    async def scenario() -> list[Any]:
        opening = await opened(PosekitWebSocketProtocol)
        protocol, log = opening.protocol, []
        opening.scope["extensions"][RECEIVE_NOW](log.append, lambda: log.append("done"))
        protocol.data_received(masked(TEXT, b"one") + masked(TEXT, b"two"))
        protocol.data_received(masked(PING, b"p"))  # no data message: done all the same
        protocol.data_received(masked(TEXT, b"three"))
        opening.scope["extensions"][RECEIVE_NOW](None)
        protocol.data_received(masked(TEXT, b"four"))  # queued for the app: no done
        _close(protocol)
        return log

    assert asyncio.run(scenario()) == ["one", "two", "done", "done", "three", "done"]


def test_a_hold_outlasts_uvicorns_own_pause_and_ends_with_the_close_handshake() -> None:
    async def scenario() -> list[str]:
        opening = await opened(PosekitWebSocketProtocol)
        protocol, transport = opening.protocol, opening.transport
        hold = opening.scope["extensions"][HOLD_READS]
        protocol.data_received(masked(TEXT, b"queued"))  # an ASGI event: uvicorn pauses
        hold(True)
        assert hold(False) is False  # uvicorn's pause stands: not resumed by the app
        hold(True)
        await protocol.receive()  # the app takes the event: uvicorn resumes, we hold
        reading_after_receive = transport.calls[-1]
        calls = len(transport.calls)
        await protocol.send({"type": "websocket.close", "code": 1000})
        _close(protocol)
        return [reading_after_receive, *transport.calls[calls:]]

    calls = asyncio.run(scenario())
    assert calls[0] == "pause"  # held still after uvicorn's resume
    assert calls[1] == "resume"  # the close handshake reads the client's close frame
    assert "resume" not in calls[2:]


def test_nothing_is_held_once_the_close_handshake_began() -> None:
    async def scenario() -> list[str]:
        opening = await opened(PosekitWebSocketProtocol)
        protocol, transport = opening.protocol, opening.transport
        await protocol.send({"type": "websocket.close", "code": 1000})
        calls = len(transport.calls)
        held = opening.scope["extensions"][HOLD_READS](True)
        _close(protocol)
        return [str(held), *transport.calls[calls:]]

    assert asyncio.run(scenario()) == ["False"]


def test_a_failing_done_closes_the_connection_as_a_failing_taker_does() -> None:
    async def scenario() -> tuple[list[Any], list[str]]:
        opening = await opened(PosekitWebSocketProtocol)
        protocol, transport = opening.protocol, opening.transport

        def failing() -> None:
            raise ValueError("done")

        opening.scope["extensions"][RECEIVE_NOW](lambda raw: None, failing)
        protocol.data_received(masked(TEXT, b"one"))
        events = [protocol.queue.get_nowait() for _ in range(protocol.queue.qsize())]
        _close(protocol)
        return events, transport.calls

    events, calls = asyncio.run(scenario())
    assert events[-1]["type"] == "websocket.disconnect" and events[-1]["code"] == 1011
    assert "close" in calls
