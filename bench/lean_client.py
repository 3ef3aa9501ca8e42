"""Load-bench websocket clients that cost the machine they share with the server little.

``bench/server_load.py`` runs its clients on the server's own machine. With websockets'
client (one connection object, two coroutines, ``json`` both ways) a state received
cost the client process about 60 µs and a target sent about 25 µs on the 2-core AMD VM
(fitted over two load levels); at 800 eager sessions that was 0.8 of the two cores,
taken from the server, and most of its growth past saturation came from the targets
(20 a second per client, whatever it receives). A remote viewer spends that on its own
machine. ``--clients lean`` measures the server with these clients instead:

- one :class:`asyncio.Protocol` per connection that writes a target as one masked text
  frame (RFC 6455 §5.2) and reads the server's frames by their header, a binary state
  (``?format=binary``) decoded from its 48-byte header and ``ref`` only
  (:mod:`posekit.sessions.live.state_frame`); a ping is answered, text messages (``hello``,
  ``tasks``, ``error``) are skipped as the websockets clients skip them;
- one ticker task that sends every client's due targets, instead of a coroutine and a
  timer per client.

The server receives and sends the very same messages either way (the same targets at
the same times, the same binary states); only the clients' own CPU differs.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import math
import os
import struct
import time
from collections.abc import Sequence
from typing import cast
from urllib.parse import urlsplit

from posekit.sessions.live.state_frame import HEADER, MAGIC, THROTTLED
from session_load import ClientMode, SessionLoad
from websockets.speedups import apply_mask

ACCEPT_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455 §1.3
UPGRADE_TIMEOUT = 30.0  # [s]
TEXT, BINARY, CLOSE, PING, PONG = 0x1, 0x2, 0x8, 0x9, 0xA


def client_frame(opcode: int, payload: bytes) -> bytes:
    """One final client frame: masked with a fresh key, 7- or 16-bit length."""
    size = len(payload)
    if size > 0xFFFF:
        raise ValueError(f"a lean client frame carries at most 65535 bytes, not {size}")
    key = os.urandom(4)
    if size < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | size)
    else:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, size)
    return head + key + apply_mask(payload, key)


class LeanClient(asyncio.Protocol):
    """One stream connection: the upgrade, then frames read in ``data_received``."""

    def __init__(self, load: SessionLoad, request: bytes, accept: bytes) -> None:
        self.load = load
        self.request = request
        self.accept = accept
        self.buffer = b""
        self.upgraded = asyncio.get_running_loop().create_future()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self.transport.write(self.request)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.upgraded.done():
            self.upgraded.set_exception(ConnectionError(f"closed before the upgrade: {exc}"))

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer + data
        if not self.upgraded.done():
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                self.buffer = buffer
                return
            head, buffer = buffer[:end], buffer[end + 4 :]
            if not head.startswith(b"HTTP/1.1 101") or self.accept not in head:
                self.upgraded.set_exception(ConnectionError(head.decode(errors="replace")))
                return
            self.upgraded.set_result(None)
        self.buffer = self._frames(buffer)

    def _frames(self, buffer: bytes) -> bytes:
        """Take every whole frame of ``buffer``; returns the rest."""
        start, end = 0, len(buffer)
        while end - start >= 2:
            opcode, size = buffer[start] & 0x0F, buffer[start + 1] & 0x7F
            offset = start + 2
            if size == 126:
                if end - offset < 2:
                    break
                (size,) = struct.unpack_from("!H", buffer, offset)
                offset += 2
            elif size == 127:
                if end - offset < 8:
                    break
                (size,) = struct.unpack_from("!Q", buffer, offset)
                offset += 8
            if end - offset < size:
                break
            self._frame(opcode, buffer[offset : offset + size])
            start = offset + size
        return buffer[start:]

    def _frame(self, opcode: int, payload: bytes) -> None:
        if opcode == BINARY and payload[:4] == MAGIC:
            self._state(payload)
        elif opcode == PING:
            self.send(PONG, payload)
        elif opcode == CLOSE and self.transport is not None:
            self.transport.close()

    def _state(self, payload: bytes) -> None:
        """Count a binary state and the latency of every target it answers."""
        now = time.perf_counter()
        _, flags, _, revision, *_, nq, n_errors, ref_bytes = HEADER.unpack_from(payload)
        load = self.load
        load.streaming = True
        if load.measuring:
            load.states += 1
            load.throttled += bool(flags & THROTTLED)
            load.last_revision = revision
            if load.first_revision is None:
                load.first_revision = revision
        if not ref_bytes:
            return
        at = HEADER.size + 8 * (nq + n_errors)
        ref = int(payload[at : at + ref_bytes])
        while load.next_ref <= ref:
            if load.measuring and load.next_ref in load.sent:
                load.latencies.append(now - load.sent[load.next_ref])
            load.next_ref += 1

    def send(self, opcode: int, payload: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(client_frame(opcode, payload))

    def send_target(self, phase: float, polite: bool) -> None:
        """The next point of the client's circle (as :func:`websockets_client.drive` sends it)."""
        load = self.load
        if polite and load.next_ref < len(load.sent):
            return  # the previous target is not answered yet
        ref = len(load.sent)
        angle = 2 * math.pi * 0.25 * time.monotonic() + phase * 6.28
        x, y, z = load.center
        position = f"[{x + 0.05 * math.cos(angle)!r},{y + 0.05 * math.sin(angle)!r},{z!r}]"
        load.sent[ref] = time.perf_counter()
        task = load.kind.task
        text = f'{{"type":"target","task":"{task}","position":{position},"ref":{ref}}}'
        self.send(TEXT, text.encode())


async def connect(url: str, load: SessionLoad) -> LeanClient:
    """A :class:`LeanClient` on the stream at ``url`` (``ws://host:port/path?query``)."""
    parts = urlsplit(url)
    if parts.hostname is None or parts.port is None:
        raise ValueError(f"{url}: a ws:// URL with a host and a port")
    key = base64.b64encode(os.urandom(16))
    accept = base64.b64encode(hashlib.sha1(key + ACCEPT_GUID).digest())
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    request = (
        f"GET {target} HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key.decode()}\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n"
    ).encode()
    loop = asyncio.get_running_loop()
    _, client = await loop.create_connection(
        lambda: LeanClient(load, request, accept), parts.hostname, parts.port
    )
    await asyncio.wait_for(client.upgraded, UPGRADE_TIMEOUT)
    return client


async def drive_all(
    urls: Sequence[str], loads: Sequence[SessionLoad], stop: asyncio.Event, mode: ClientMode
) -> None:
    """Connect a client per load, send targets at ``mode.target_hz`` (client ``i`` at
    phase ``i / n`` of the period, as :func:`websockets_client.drive`) until ``stop``."""
    clients = [await connect(url, load) for url, load in zip(urls, loads, strict=True)]
    count = len(clients)
    try:
        if mode.target_hz <= 0.0:
            await stop.wait()
            return
        period = 1.0 / mode.target_hz
        start, sent = time.monotonic(), 0
        while not stop.is_set():
            now = time.monotonic()
            while start + (sent // count + (sent % count) / count) * period <= now:
                i = sent % count
                clients[i].send_target(i / count, mode.polite)
                sent += 1
            await asyncio.sleep(0.001)
    finally:
        for client in clients:
            client.send(CLOSE, struct.pack("!H", 1000))
            if client.transport is not None:
                client.transport.close()
