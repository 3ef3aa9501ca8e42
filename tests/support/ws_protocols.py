"""A uvicorn websocket protocol on a recording transport, its connection accepted by a
minimal ASGI app: for tests of ``posekit.ws_protocol`` against uvicorn's own."""

from __future__ import annotations

import asyncio
import socket
from typing import Any, NamedTuple

from uvicorn.config import Config
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from uvicorn.server import ServerState
from websockets.client import ClientProtocol
from websockets.uri import parse_uri


def masked(head: int, payload: bytes, mask: bytes = b"\x01\x02\x03\x04") -> bytes:
    """A client's frame: ``head`` (FIN, RSV, opcode), the 7- or 16-bit length with the
    mask bit, the mask and the masked ``payload`` (RFC 6455 §5.2)."""
    data = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    if len(payload) < 126:
        return bytes([head, 0x80 | len(payload)]) + mask + data
    return bytes([head, 0x80 | 126]) + len(payload).to_bytes(2, "big") + mask + data


class Transport:
    """Records what the protocol does to its connection."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.calls: list[str] = []
        self.sock: socket.socket | None = None  # what ``get_extra_info("socket")`` gives

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        info = {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 5000)}
        return self.sock if name == "socket" else info.get(name)

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def pause_reading(self) -> None:
        self.calls.append("pause")

    def resume_reading(self) -> None:
        self.calls.append("resume")

    def is_closing(self) -> bool:
        return "close" in self.calls

    def close(self) -> None:
        self.calls.append("close")


class Opened(NamedTuple):
    """An open connection: the protocol, its transport, how many writes the handshake
    took, and the scope the app got."""

    protocol: WebSocketsSansIOProtocol
    transport: Transport
    handshake: int
    scope: dict[str, Any]


async def opened(cls: type[WebSocketsSansIOProtocol], **options: Any) -> Opened:
    """A protocol of class ``cls`` (uvicorn ``Config`` ``options``) whose connection the
    app accepted."""
    scopes: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        scopes.append(scope)
        await receive()
        await send({"type": "websocket.accept"})
        await asyncio.Future()

    config = Config(app, ws_per_message_deflate=False, lifespan="off", log_config=None, **options)
    config.load()
    protocol = cls(config, ServerState(), {})
    transport = Transport()
    protocol.connection_made(transport)  # type: ignore[arg-type]
    client = ClientProtocol(parse_uri("ws://127.0.0.1:8000/stream"))
    client.send_request(client.connect())
    protocol.data_received(b"".join(client.data_to_send()))
    for _ in range(5):
        await asyncio.sleep(0)  # the app accepts
    return Opened(protocol, transport, len(transport.written), scopes[0])
