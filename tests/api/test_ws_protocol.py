"""posekit's websocket protocol (posekit.ws_protocol) does what uvicorn's
``websockets-sansio`` does with every byte sequence: the same ASGI events in the same
order, the same bytes written back (pongs, closes), the same flow control — whether the
frames come whole, split anywhere, or many in one read."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from posekit.ws_protocol import PosekitWebSocketProtocol
from support.ws_protocols import masked as _masked
from support.ws_protocols import opened
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

MAX_SIZE = 1000


def _frames(rng: random.Random) -> list[bytes]:
    """A client's frames (RFC 6455 §5.2, masked): small and 16-bit-length text, binary,
    ping, a message in two fragments, more text."""

    def masked(head: int, payload: bytes) -> bytes:
        return _masked(head, payload, bytes(rng.randrange(256) for _ in range(4)))

    return [
        masked(0x81, b'{"type": "target", "ref": 1}'),
        masked(0x81, b"x" * 300),
        masked(0x82, bytes(rng.randrange(256) for _ in range(40))),
        masked(0x89, b"p"),
        masked(0x01, b"first half, "),
        masked(0x80, b"second half"),
        masked(0x81, "état".encode()),
    ]


def _unmasked_text(payload: bytes) -> bytes:
    return bytes([0x81, len(payload)]) + payload


TAILS = {
    "none": [],
    "too large": [_masked(0x81, b"y" * (MAX_SIZE + 1)), _masked(0x81, b"after")],
    "invalid utf-8": [_masked(0x81, b"\xff\xfe"), _masked(0x81, b"after")],
    "unmasked": [_unmasked_text(b"hello"), _masked(0x81, b"after")],
    "reserved bit": [_masked(0xC1, b"hello"), _masked(0x81, b"after")],
    "close": [_masked(0x88, (1000).to_bytes(2, "big")), _masked(0x81, b"after")],
}


async def _run(cls: type[WebSocketsSansIOProtocol], chunks: list[bytes]) -> tuple[Any, ...]:
    protocol, transport, handshake, _ = await opened(
        cls, ws_max_size=MAX_SIZE, ws_ping_interval=None
    )
    assert protocol.handshake_complete and protocol.queue.empty()  # the app took connect
    events = []
    for chunk in chunks:
        protocol.data_received(chunk)
    while not protocol.queue.empty():
        events.append(protocol.queue.get_nowait())
    for task in list(protocol.tasks):
        task.cancel()
    return events, transport.written[handshake:], transport.calls, protocol.close_sent


def _split(data: bytes, rng: random.Random, how: str) -> list[bytes]:
    if how == "whole":
        return [data]
    if how == "bytes":
        return [data[i : i + 1] for i in range(len(data))]
    cuts = sorted(rng.sample(range(1, len(data)), 5))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


@pytest.mark.parametrize("tail", sorted(TAILS))
@pytest.mark.parametrize("how", ["whole", "bytes", "random", "per frame"])
def test_the_protocol_does_what_uvicorns_does(tail: str, how: str) -> None:
    rng = random.Random(f"{tail} {how}")
    frames = _frames(rng) + TAILS[tail]
    if how == "per frame":
        chunks = frames
    else:
        chunks = _split(b"".join(frames), rng, how)
    ours = asyncio.run(_run(PosekitWebSocketProtocol, chunks))
    uvicorns = asyncio.run(_run(WebSocketsSansIOProtocol, chunks))
    assert ours == uvicorns
    events, _, _, close_sent = ours
    if tail == "none":
        assert len(events) == 5 and not close_sent  # the ping is answered, not passed on
        assert events[1] == {"type": "websocket.receive", "text": "x" * 300}
        assert events[3] == {"type": "websocket.receive", "text": "first half, second half"}
        assert events[4] == {"type": "websocket.receive", "text": "état"}
    elif tail != "close":
        assert close_sent  # the connection is failed, as uvicorn fails it


def test_plain_frames_skip_the_general_parser() -> None:
    fed: list[bytes] = []

    async def scenario() -> list[Any]:
        protocol = (await opened(PosekitWebSocketProtocol)).protocol
        receive_data = protocol.conn.receive_data
        protocol.conn.receive_data = lambda data: (fed.append(data), receive_data(data))[1]  # type: ignore[method-assign]
        frames = [_masked(0x81, f"message {i}".encode()) for i in range(3)]
        protocol.data_received(b"".join(frames) + _masked(0x89, b"p"))
        events = [protocol.queue.get_nowait() for _ in range(3)]
        for task in list(protocol.tasks):
            task.cancel()
        return events

    events = asyncio.run(scenario())
    assert [e["text"] for e in events] == ["message 0", "message 1", "message 2"]
    assert fed == [_masked(0x89, b"p")]  # only the ping went to websockets' parser


async def _sent(cls: type[WebSocketsSansIOProtocol], messages: list[dict[str, Any]]) -> Any:
    """The bytes written for ``messages`` sent on an open connection (or the error)."""
    protocol, transport, handshake, _ = await opened(cls)
    outcome: list[Any] = []
    for message in messages:
        try:
            await protocol.send(message)  # type: ignore[arg-type]
        except Exception as exc:  # the same error is the point
            outcome.append(repr(exc))
    for task in list(protocol.tasks):
        task.cancel()
    return b"".join(transport.written[handshake:]), outcome, transport.calls


def test_data_messages_are_sent_as_uvicorn_sends_them() -> None:
    messages: list[dict[str, Any]] = [
        {"type": "websocket.send", "text": '{"type": "state", "seq": 1}'},
        {"type": "websocket.send", "text": "é" * 100},  # 200 bytes: a 16-bit length
        {"type": "websocket.send", "bytes": b"\x00" * 48},
        {"type": "websocket.send", "text": "x" * 70_000},  # a 64-bit length
        {"type": "websocket.send", "bytes": b"", "text": "ignored"},
        {"type": "websocket.send", "text": ""},
        {"type": "websocket.send"},
        {"type": "websocket.close", "code": 4410, "reason": "session closed"},
        {"type": "websocket.send", "text": "after the close"},
    ]
    ours = asyncio.run(_sent(PosekitWebSocketProtocol, messages))
    assert ours == asyncio.run(_sent(WebSocketsSansIOProtocol, messages))
    written, errors, _ = ours
    assert written.startswith(b"\x81\x1b" + b'{"type": "state", "seq": 1}')
    assert len(errors) == 1 and "after sending 'websocket.close'" in errors[0]
