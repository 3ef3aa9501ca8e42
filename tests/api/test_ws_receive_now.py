"""posekit.ws_protocol's ``receive_now`` (the scope extension the stream takes client
messages with): whole data messages handed over from the read, in order with the ASGI
events; invalid UTF-8 and a failing taker close the connection as uvicorn would."""

from __future__ import annotations

import asyncio
from typing import Any

from posekit.ws_protocol import RECEIVE_NOW, PosekitWebSocketProtocol
from support.ws_protocols import masked, opened

TEXT, BINARY, CONTINUATION = 0x81, 0x82, 0x80
FIRST_FRAGMENT = 0x01  # opcode 1 (text), FIN clear


def _events(protocol: Any) -> list[Any]:
    """The ASGI events queued for the app."""
    return [protocol.queue.get_nowait() for _ in range(protocol.queue.qsize())]


def _close(protocol: Any) -> None:
    for task in list(protocol.tasks):
        task.cancel()


def test_messages_are_taken_as_read_and_in_order_with_queued_events() -> None:
    async def scenario() -> tuple[list[Any], list[Any], list[Any]]:
        opening = await opened(PosekitWebSocketProtocol)
        protocol, taken = opening.protocol, []
        opening.scope["extensions"][RECEIVE_NOW](taken.append)
        protocol.data_received(masked(TEXT, b"one") + masked(BINARY, b"\x00two"))
        first = list(taken)
        # A fragmented message goes through websockets' parser and is queued; what comes
        # after it waits behind it in the queue, so the app reads both in order.
        protocol.data_received(masked(FIRST_FRAGMENT, b"thr") + masked(CONTINUATION, b"ee"))
        protocol.data_received(masked(TEXT, b"four"))
        queued = _events(protocol)
        protocol.data_received(masked(TEXT, b"five"))  # the queue is empty again
        opening.scope["extensions"][RECEIVE_NOW](None)
        protocol.data_received(masked(TEXT, b"six"))  # back to ASGI events
        last = _events(protocol)
        _close(protocol)
        return first, queued, [*taken[len(first) :], *last]

    first, queued, rest = asyncio.run(scenario())
    assert first == ["one", b"\x00two"]
    assert [e.get("text") for e in queued] == ["three", "four"]
    assert rest == ["five", {"type": "websocket.receive", "text": "six"}]


def test_invalid_utf8_and_a_failing_taker_close_the_connection() -> None:
    async def scenario(payload: bytes, take: Any) -> tuple[list[Any], Any]:
        opening = await opened(PosekitWebSocketProtocol)
        protocol, transport = opening.protocol, opening.transport
        opening.scope["extensions"][RECEIVE_NOW](take)
        transport.written.clear()
        protocol.data_received(masked(TEXT, payload))
        events = _events(protocol)
        _close(protocol)
        return events, transport

    def failing(raw: str | bytes) -> None:
        raise ValueError(raw)

    events, transport = asyncio.run(scenario(b"\xff\xfe", lambda raw: None))
    assert events[-1] == {"type": "websocket.disconnect", "code": 1007, "reason": ""}
    assert "close" in transport.calls
    events, transport = asyncio.run(scenario(b"boom", failing))
    assert events[-1]["type"] == "websocket.disconnect" and events[-1]["code"] == 1011
    assert "close" in transport.calls and transport.written  # the close frame went out
