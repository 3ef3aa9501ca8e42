"""uvicorn's websocket protocol (websockets' Sans-I/O one), with whole small client
frames taken without the general frame parser.

A client dragging a gizmo sends a small text frame many times a second. uvicorn's
``websockets-sansio`` protocol hands every byte to websockets' ``ServerProtocol``, whose
parser — generator-based coroutines reading the frame's header, length, mask and
payload piece by piece — cost about 48k instructions a message here, more than posekit
spends validating and queueing the target it carries (``bench/stream_pass.py``).

:class:`PosekitWebSocketProtocol` reads the common frame itself, and only that frame: a
complete, final, unfragmented text or binary data frame (RFC 6455 §5.2: FIN set, RSV bits
clear, opcode 1 or 2), masked as a client's must be, with a 7- or 16-bit payload length
within the connection's size limit, arriving while the connection is open, no message is
in progress and websockets holds no buffered bytes. It unmasks the payload and passes it
on exactly as uvicorn does with a frame websockets parsed (``handle_text`` /
``handle_bytes``: the same ASGI event, the same UTF-8 check and 1007 close, the same flow
control). At the first byte that is anything else — a control frame, a fragment, a
64-bit length, an unmasked or oversized frame, an incomplete frame — the rest of the data
goes to websockets as before, which answers or closes as it always did. Frames are taken
in order, so the messages reach the app in the order they were sent; and as uvicorn
does, nothing of a read that breaks the protocol reaches the app.

Sending (a state per watcher, many times a second) is the same story: websockets builds a
``Frame`` and serializes it in Python. An app message ``websocket.send`` on an open
connection with nothing else queued is written as its one unmasked, final frame (RFC 6455
§5.2, the 7-, 16- or 64-bit length) in the very bytes websockets would write, after the
same wait for the transport's flow control; any other case is the base class's.

And an app may write such a message without any coroutine at all: the ASGI scope's
``extensions`` carry :data:`SEND_NOW`, a function ``send_now(payload, binary) -> bool``
that writes one data message (``payload`` the UTF-8 text or the bytes) at once when the
ASGI ``send`` would write it without waiting — the connection open, nothing queued, the
transport not paused by its flow control — and returns False, writing nothing,
otherwise (then the app sends it the ASGI way, which waits). The app calls it only when
none of its own sends is in progress, so that messages keep their order.

Receiving is the mirror image (a target per client message, many times a second):
uvicorn queues each message as an ASGI event, pauses reading, wakes the app's task, and
resumes reading when the app takes it. The scope's ``extensions`` carry
:data:`RECEIVE_NOW`, a function ``receive_now(take, done=None)``: from then on a whole data message
(``take`` gets the text as ``str``, or the ``bytes``) is handed to ``take`` from the read
that completed it, without an ASGI event, a queue or a task — when nothing waits for the
app in the ASGI queue, so that messages keep their order (a message behind a queued
event is queued too, and the app's ``receive`` gets both). ``receive_now(None)`` ends
it. An exception from ``take`` fails the connection (close 1011), as an app's failure
would. The app's ``receive`` still gets everything else (the disconnect, fragmented
messages, what arrives while an event is queued). ``done()``, when given, is called once
the messages of a read have all been taken, so that an app can decide once per read,
not once per message.

And an app may leave the client's bytes in the kernel for a while: :data:`HOLD_READS`
is ``hold_reads(held) -> bool``. ``hold_reads(True)`` stops reading the socket (what the
client sends meanwhile waits in the kernel's receive buffer, unread: no wake-up, no
read, no frame parsed); ``hold_reads(False)`` reads it again and returns whether bytes
are waiting (``FIONREAD``), which the event loop's next turn reads — all of them in one
read, then ``done()``. A client dragging a gizmo faster than its session is stepped thus
costs the server a read per answer to its targets, not one per message. uvicorn's own
pause (a message queued for the app) and the hold are independent: the socket is read
only when neither holds it, and the close handshake lifts the hold (the client's close
frame is read).
"""

from __future__ import annotations

import asyncio
import fcntl
import struct
import sys
import termios
from collections.abc import Callable
from typing import TYPE_CHECKING

from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.http11 import Request
from websockets.protocol import State

if TYPE_CHECKING:
    from uvicorn._types import ASGIReceiveEvent, ASGISendEvent

try:  # websockets' C unmasking, as its own parser uses
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover - a build of websockets without it
    from websockets.utils import apply_mask

_FIN_TEXT = 0x81  # FIN, RSV1-3 clear, opcode 1
_FIN_BINARY = 0x82  # FIN, RSV1-3 clear, opcode 2
_MASKED = 0x80
_LENGTH_16 = 126  # the 7-bit length field's value meaning "a 16-bit length follows"
_LENGTH_64 = 127  # ... "a 64-bit length follows"
_HEADER_16 = struct.Struct("!BBH")  # head, 126, a 16-bit length
SEND_NOW = "posekit.send_now"
"""The scope extension: ``send_now(payload: bytes, binary: bool) -> bool`` (module
docstring)."""
RECEIVE_NOW = "posekit.receive_now"
"""The scope extension: ``receive_now(take: Take | None, done: Done | None = None)``
(module docstring)."""

HOLD_READS = "posekit.hold_reads"
"""The scope extension: ``hold_reads(held: bool) -> bool`` (module docstring)."""

Take = Callable[[str | bytes], None]
"""Takes one client data message: its text, or its bytes."""
Done = Callable[[], None]
"""Called once the messages of one read have all been taken."""


class PosekitWebSocketProtocol(WebSocketsSansIOProtocol):
    """``websockets-sansio`` with fast paths for whole small data frames received and
    data messages sent (module docstring); everything else is the base class's."""

    _paused = False  # the transport paused writing (flow control): ``writable`` is clear
    _take: Take | None = None  # receive_now's taker
    _done: Done | None = None  # ... and what it calls after each read
    _held = False  # hold_reads(True): the app keeps the client's bytes in the kernel

    async def send(self, message: ASGISendEvent) -> None:
        if message["type"] == "websocket.close" and self._held:
            self._held = False  # the client's close frame must be read
            if not self.read_paused:
                self.transport.resume_reading()
        if message["type"] != "websocket.send" or not self._plain_send_allowed():
            return await super().send(message)
        await self.writable.wait()
        if self.disconnected:
            raise ClientDisconnected()
        if not self._plain_send_allowed():  # it changed while we waited
            return await super().send(message)
        data = message.get("bytes")
        if data is not None:
            self.transport.write(_frame_header(_FIN_BINARY, len(data)) + data)
            return None
        text = message.get("text")
        if text is None:
            return await super().send(message)
        payload = text.encode()
        self.transport.write(_frame_header(_FIN_TEXT, len(payload)) + payload)
        return None

    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)  # only an upgrade accepted by websockets has one
        if scope is not None:  # the app's task starts later: it sees the extension
            scope["extensions"][SEND_NOW] = self.send_now
            scope["extensions"][RECEIVE_NOW] = self.receive_now
            scope["extensions"][HOLD_READS] = self.hold_reads

    def receive_now(self, take: Take | None, done: Done | None = None) -> None:
        """Hand whole data messages to ``take`` from now on, and call ``done`` after each
        read (None: as ASGI events again)."""
        self._take = take
        self._done = done if take is not None else None

    def hold_reads(self, held: bool) -> bool:
        """Stop (``held``) or resume reading the client's socket; on resuming, whether
        bytes sent meanwhile wait to be read (the loop reads them in its next turn).
        Nothing is held once the close handshake began or the connection is lost."""
        transport = self.transport
        if held and (self.close_sent or self.disconnected or transport.is_closing()):
            return False
        self._held = held
        if held:
            transport.pause_reading()
            return False
        if self.read_paused or transport.is_closing():
            return False
        transport.resume_reading()
        return bytes_waiting(transport)

    async def receive(self) -> ASGIReceiveEvent:
        message = await super().receive()
        if self._held:  # uvicorn resumed reading as its queue emptied: the hold stays
            self.transport.pause_reading()
        return message

    def send_receive_event_to_app(self) -> None:
        frames = self.frames
        if len(frames) != 1:
            return super().send_receive_event_to_app()
        self.frames = []
        self._receive_whole(self.curr_msg_data_type != "text", frames[0])

    def _receive_whole(self, binary: bool, data: bytes) -> None:
        """A whole data message (its bytes as received, unmasked): handed to the taker
        when there is one and nothing waits for the app in the ASGI queue; else queued
        as uvicorn queues it (``send_receive_event_to_app`` of a final ``handle_text`` /
        ``handle_bytes``)."""
        self.curr_msg_data_type = "bytes" if binary else "text"
        take = self._take
        if take is not None and not self.close_sent and self.queue.empty():
            try:
                payload: str | bytes = data if binary else data.decode()
            except UnicodeDecodeError:
                pass  # queued below, as uvicorn does: which fails it with 1007
            else:
                try:
                    take(payload)
                except Exception:
                    self._fail_app("taking a client message failed")
                return
        self.frames = [data]
        super().send_receive_event_to_app()

    def send_now(self, payload: bytes, binary: bool) -> bool:
        """Write one data message (UTF-8 text, or bytes when ``binary``) as its one frame
        if the ASGI ``send`` would write it without waiting; whether it was written."""
        conn = self.conn
        if (  # _plain_send_allowed, spelled out (a state per watcher comes here)
            self._paused
            or self.disconnected
            or not self.handshake_complete
            or self.close_sent
            or self.initial_response is not None
            or conn.state is not State.OPEN
            or conn.writes
            or conn.expect_continuation_frame
            or conn.extensions
        ):
            return False
        length = len(payload)
        head = _FIN_BINARY if binary else _FIN_TEXT
        if _LENGTH_16 <= length < 1 << 16:  # a state's usual size
            self.transport.write(_HEADER_16.pack(head, _LENGTH_16, length) + payload)
        else:
            self.transport.write(_frame_header(head, length) + payload)
        return True

    def pause_writing(self) -> None:
        self._paused = True  # what ``writable`` says, read without a call
        super().pause_writing()

    def resume_writing(self) -> None:
        self._paused = False
        super().resume_writing()

    def _plain_send_allowed(self) -> bool:
        """Whether a data frame may be written as is: an open connection, nothing queued
        by websockets, no fragmented message in progress, no extension."""
        conn = self.conn
        return (
            self.handshake_complete
            and not self.close_sent
            and self.initial_response is None
            and conn.state is State.OPEN
            and not conn.writes
            and not conn.expect_continuation_frame
            and not conn.extensions
        )

    def data_received(self, data: bytes) -> None:
        taken, frames = self._plain_frames(data)
        data = data[taken:]
        if data:
            self.conn.receive_data(data)
            if self.conn.parser_exc is not None:
                # As uvicorn: nothing of a read that broke the protocol reaches the app.
                self.handle_parser_exception()
                return
        for binary, payload in frames:  # handle_text / handle_bytes of a final frame
            self._receive_whole(binary, payload)
        if data:
            self.handle_events()
        done = self._done
        if done is not None and not self.close_sent:
            try:
                done()
            except Exception:
                self._fail_app("finishing a read of client messages failed")

    def _fail_app(self, what: str) -> None:
        """The app's taker or its ``done`` failed: logged, and the connection failed with
        1011, as an app's failure would."""
        self.logger.exception(what)
        self.conn.send_close(1011)
        self.handle_parser_exception()

    def _plain_frames(self, data: bytes) -> tuple[int, list[tuple[bool, bytes]]]:
        """The whole plain data frames at the start of ``data`` (whether binary, the
        unmasked payload; no ``Frame`` built), and the number of bytes they took: none
        unless websockets' parser is between frames of an open connection, with no
        message in progress, nothing buffered and no extension."""
        frames: list[tuple[bool, bytes]] = []
        conn = self.conn
        if not (
            self.handshake_complete
            and conn.state is State.OPEN
            and conn.current_size is None
            and not conn.reader.buffer
            and not conn.extensions
            and conn.parser_exc is None
        ):
            return 0, frames
        limit = conn.max_message_size
        start, end = 0, len(data)
        while end - start >= 6:
            head = data[start]
            if head != _FIN_TEXT and head != _FIN_BINARY:
                break
            second = data[start + 1]
            if not second & _MASKED:
                break
            length = second & 0x7F
            header = 2
            if length == _LENGTH_16:
                if end - start < 8:
                    break
                length = (data[start + 2] << 8) | data[start + 3]
                header = 4
            elif length > _LENGTH_16:
                break
            if limit is not None and length > limit:
                break
            payload_at = start + header + 4
            if end < payload_at + length:
                break
            mask = data[start + header : payload_at]
            payload = apply_mask(data[payload_at : payload_at + length], mask)
            frames.append((head == _FIN_BINARY, payload))
            start = payload_at + length
        return start, frames


def bytes_waiting(transport: asyncio.BaseTransport) -> bool:
    """Whether the transport's socket has received bytes not yet read (``FIONREAD``);
    False when it has no socket to ask."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return False
    try:
        count = fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0")
    except (OSError, ValueError):  # closed meanwhile
        return False
    return int.from_bytes(count, sys.byteorder) > 0


def _frame_header(head: int, length: int) -> bytes:
    """An unmasked frame's header: ``head`` (FIN, RSV, opcode), then the payload length
    in 7, 7 + 16 or 7 + 64 bits (RFC 6455 §5.2)."""
    if length < _LENGTH_16:
        return bytes((head, length))
    if length < 1 << 16:
        return bytes((head, _LENGTH_16)) + length.to_bytes(2, "big")
    return bytes((head, _LENGTH_64)) + length.to_bytes(8, "big")
