"""posekit.ws_protocol's ``send_now`` (the scope extension the stream writes states
with): the very bytes uvicorn's ASGI send writes, and nothing when that send would wait
(flow control) or could not send (closed, disconnected)."""

from __future__ import annotations

import asyncio
from typing import Any

from posekit.ws_protocol import SEND_NOW, PosekitWebSocketProtocol
from support.ws_protocols import Transport, opened
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

PAYLOADS = [(b'{"type":"state"}', False), ("é".encode() * 100, False), (b"\0" * 48, True)]
PAYLOADS += [(b"x" * 70_000, False), (b"", True)]


async def _opened(cls: type[WebSocketsSansIOProtocol]) -> tuple[Any, Transport, dict[str, Any]]:
    """A protocol whose app accepted the connection, its transport (the handshake's
    writes cleared), the app's scope."""
    protocol, transport, _, scope = await opened(cls)
    transport.written.clear()
    return protocol, transport, scope


def test_send_now_writes_what_uvicorn_writes() -> None:
    async def scenario() -> list[list[bytes]]:
        theirs, their_transport, _ = await _opened(WebSocketsSansIOProtocol)
        _, our_transport, scope = await _opened(PosekitWebSocketProtocol)
        for payload, binary in PAYLOADS:
            key = "bytes" if binary else "text"
            await theirs.send(
                {"type": "websocket.send", key: payload if binary else payload.decode()}
            )
            assert scope["extensions"][SEND_NOW](payload, binary)
        return [their_transport.written, our_transport.written]

    theirs, ours = asyncio.run(scenario())
    assert b"".join(ours) == b"".join(theirs) and len(ours) == len(PAYLOADS)


def test_send_now_writes_nothing_when_the_send_would_wait_or_fail() -> None:
    async def scenario() -> None:
        protocol, transport, scope = await _opened(PosekitWebSocketProtocol)
        send_now = scope["extensions"][SEND_NOW]
        protocol.pause_writing()  # the client does not read: the buffer is full
        assert not send_now(b"state", False)
        protocol.resume_writing()
        assert send_now(b"state", False)
        await protocol.send({"type": "websocket.close", "code": 4410})
        written = len(transport.written)
        assert not send_now(b"state", False)  # closing: nothing after the close frame
        protocol.connection_lost(None)
        assert not send_now(b"state", True) and len(transport.written) == written

    asyncio.run(scenario())
