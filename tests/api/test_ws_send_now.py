"""posekit.ws_protocol's ``send_now`` (the scope extension the stream writes states
with): the very bytes uvicorn's ASGI send writes, and nothing when that send would wait
(flow control) or could not send (closed, disconnected)."""

from __future__ import annotations

import asyncio
from typing import Any

from posekit.ws_protocol import SEND_NOW, PosekitWebSocketProtocol
from uvicorn.config import Config
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from uvicorn.server import ServerState
from websockets.client import ClientProtocol
from websockets.uri import parse_uri

PAYLOADS = [(b'{"type":"state"}', False), ("é".encode() * 100, False), (b"\0" * 48, True)]
PAYLOADS += [(b"x" * 70_000, False), (b"", True)]


class Transport:
    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.closing = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 5000)}.get(name)

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def pause_reading(self) -> None: ...

    def resume_reading(self) -> None: ...

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True


async def _opened(cls: type[WebSocketsSansIOProtocol]) -> tuple[Any, Transport, dict[str, Any]]:
    """A protocol whose app accepted the connection, its transport, the app's scope."""
    scopes: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        scopes.append(scope)
        await receive()
        await send({"type": "websocket.accept"})
        await asyncio.Future()

    config = Config(app, ws_per_message_deflate=False, lifespan="off", log_config=None)
    config.load()
    protocol = cls(config, ServerState(), {})
    transport = Transport()
    protocol.connection_made(transport)  # type: ignore[arg-type]
    client = ClientProtocol(parse_uri("ws://127.0.0.1:8000/stream"))
    client.send_request(client.connect())
    protocol.data_received(b"".join(client.data_to_send()))
    for _ in range(5):
        await asyncio.sleep(0)
    transport.written.clear()  # the handshake
    return protocol, transport, scopes[0]


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
