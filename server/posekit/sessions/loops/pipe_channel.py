"""The server process's end of a solver process's pipe, read and written by an event loop.

The solver process keeps using :class:`multiprocessing.connection.Connection` at its end;
this end speaks the same framing on the pipe's socket, without blocking the loop:

- a frame is a 4-byte big-endian signed length ``n`` then ``n`` bytes of payload; a
  payload over 2³¹ − 1 bytes has length −1, then an 8-byte big-endian unsigned length
  (``Connection._send_bytes`` / ``_recv_bytes`` in CPython's ``multiprocessing.connection``);
- reading: the loop calls :meth:`PipeChannel._readable` when the socket has bytes; it
  reads what is there into one reused buffer and hands each complete payload to
  ``on_frame``, on the loop (no reader thread, no hop to the loop per message). A frame
  that arrives in pieces waits in the buffer for the rest;
- writing: :meth:`send` may be called from any thread; it writes what the socket takes
  at once and keeps the rest, in order, for the loop to write when the socket is
  writable. The loop never waits for the solver process to read: the solver process
  may be blocked writing to us, and the loop is what reads. Other threads wait for a
  large backlog to drain with :meth:`wait_drained` (outside their locks), as they waited
  in a blocking send before.

The end of the file (the solver process died) is reported once, on the loop, by
``on_eof``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import select
import socket
import struct
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection

logger = logging.getLogger(__name__)

_LENGTH = struct.Struct("!i")
_LONG_LENGTH = struct.Struct("!Q")
_LONG = 0x7FFFFFFF  # payloads longer than this have the long header
BUFFER_BYTES = 1 << 18  # the read buffer (a States batch of 100 arm7 sessions is ~70 kB)
HIGH_WATER_BYTES = 1 << 20  # a thread's send waits while more than this is unwritten
_POLL_MS = 50  # [ms] a waiting thread's slice between two looks at the loop's progress


def frame_header(length: int) -> bytes:
    """The header ``Connection.send_bytes`` puts before a payload of ``length`` bytes."""
    if length > _LONG:
        return _LENGTH.pack(-1) + _LONG_LENGTH.pack(length)
    return _LENGTH.pack(length)


class PipeChannel:
    """Framed, non-blocking I/O on our end of a solver pipe, on ``loop`` (module docstring).

    Args:
        connection: Our end of the pipe; the channel takes it over (closes it).
        loop: The event loop that reads and writes; it must run until :meth:`close`.
        on_frame: Called on the loop with each payload, a view valid during the call.
        on_eof: Called once on the loop when the other end closed (or the socket failed).
    """

    def __init__(
        self,
        connection: Connection,
        loop: asyncio.AbstractEventLoop,
        on_frame: Callable[[memoryview], None],
        on_eof: Callable[[], None],
    ) -> None:
        self._socket = socket.socket(fileno=os.dup(connection.fileno()))
        connection.close()
        self._socket.setblocking(False)
        self._fd = self._socket.fileno()
        self._loop = loop
        self._on_frame = on_frame
        self._on_eof = on_eof
        self._buffer = bytearray(BUFFER_BYTES)
        self._view = memoryview(self._buffer)
        self._start = 0  # first unparsed byte
        self._end = 0  # end of the bytes read
        self._lock = threading.Lock()  # the unwritten bytes and the socket's writes
        self._unwritten = bytearray()
        self._writer_armed = False
        self._reading = False
        self._closed = False
        self._broken = False  # a write failed: the other end is gone

    # ------------------------------------------------------------- lifecycle
    def open(self) -> None:
        """Start reading (from any thread; on the loop's next turn when not on it)."""
        self._on_loop(self._start_reading)

    def _start_reading(self) -> None:
        if self._closed:
            return
        self._reading = True
        self._loop.add_reader(self._fd, self._readable)
        with self._lock:
            if self._unwritten:
                self._arm_writer()

    def detach(self, timeout: float) -> bool:
        """Stop the loop from reading and writing; True once it has (within ``timeout``),
        after which :meth:`pump` may be called from this thread."""
        done = threading.Event()

        def detach_here() -> None:
            self._stop_io()
            done.set()

        if self._loop.is_closed():
            return True
        if self.on_loop_thread() or not self._loop.is_running():
            detach_here()
            return True
        try:
            self._loop.call_soon_threadsafe(detach_here)
        except RuntimeError:  # closed meanwhile: nothing reads any more
            return True
        return done.wait(timeout)

    def pump(self) -> None:
        """Write what the socket takes and read (and drop) what came: for the end, when
        the loop no longer does (:meth:`detach`) and the solver process must not block."""
        with self._lock:
            self._write_unwritten()
        try:
            while self._socket.recv_into(self._view):
                pass
        except OSError:  # BlockingIOError: nothing more now
            pass

    def close(self) -> None:
        """Stop reading and writing and close the socket (call after :meth:`detach`, or
        on the loop)."""
        self._closed = True
        with self._lock:
            self._unwritten.clear()
        self._socket.close()

    def on_loop_thread(self) -> bool:
        """Whether the caller runs on the channel's loop (where it must never wait)."""
        return _running_loop() is self._loop

    def _stop_io(self) -> None:
        if self._reading:
            self._reading = False
            self._loop.remove_reader(self._fd)
        with self._lock:
            if self._writer_armed:
                self._writer_armed = False
                self._loop.remove_writer(self._fd)

    def _on_loop(self, fn: Callable[[], None]) -> None:
        if self.on_loop_thread():
            fn()
            return
        try:
            self._loop.call_soon_threadsafe(fn)
        except RuntimeError:  # the loop is closed: nobody reads or writes any more
            pass

    # --------------------------------------------------------------- reading
    def _readable(self) -> None:
        """Read what is there and hand over every complete frame (on the loop)."""
        if self._end == len(self._buffer):
            self._make_room()
        try:
            count = self._socket.recv_into(self._view[self._end :])
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            count = 0
        if count == 0:
            self._stop_io()
            self._on_eof()
            return
        self._end += count
        self._parse()

    def _parse(self) -> None:
        buffer, start, end = self._buffer, self._start, self._end
        while end - start >= 4:
            (length,) = _LENGTH.unpack_from(buffer, start)
            header = 4
            if length == -1:
                if end - start < 12:
                    break
                (length,) = _LONG_LENGTH.unpack_from(buffer, start + 4)
                header = 12
            if end - start < header + length:  # the rest is still to come
                self._start = start
                self._need(header + length)
                return
            start += header + length
            self._start = start  # a frame handler may close the channel
            try:
                self._on_frame(self._view[start - length : start])
            except Exception:  # the next frames must still be read
                logger.exception("could not handle a frame from a solver process")
            if self._closed or not self._reading:
                return
        if start == end:
            self._start = self._end = 0
        else:
            self._start = start

    def _need(self, frame_bytes: int) -> None:
        """Make sure the frame at the start, ``frame_bytes`` long with its header, fits in
        the buffer once it is read (it may move the unparsed bytes to the front)."""
        if frame_bytes > len(self._buffer):
            larger = bytearray(frame_bytes)
            larger[: self._end - self._start] = self._view[self._start : self._end]
            self._buffer, self._view = larger, memoryview(larger)
            self._end -= self._start
            self._start = 0

    def _make_room(self) -> None:
        """Move the unparsed bytes to the front of the buffer (it is full)."""
        left = self._end - self._start
        self._view[:left] = self._view[self._start : self._end]
        self._start, self._end = 0, left

    # --------------------------------------------------------------- writing
    def send(self, payload: bytes) -> None:
        """Queue one frame with ``payload``, after the ones sent before it; it is written
        at once as far as the socket takes it, the rest by the loop. Never blocks; a
        frame for a process that is gone is dropped."""
        length = len(payload)  # frame_header(length), inline: a target's batch comes here
        header = _LENGTH.pack(length) if length <= _LONG else frame_header(length)
        with self._lock:
            if self._closed or self._broken:
                return
            if self._unwritten:
                self._unwritten += header
                self._unwritten += payload
                return
            try:
                sent = self._socket.sendmsg([header, payload])
            except (BlockingIOError, InterruptedError):
                sent = 0
            except OSError:
                self._broken = True
                return
            if sent < len(header):
                self._unwritten += header[sent:]
                self._unwritten += payload
            elif sent < len(header) + len(payload):
                self._unwritten += memoryview(payload)[sent - len(header) :]
            else:
                return
        self._on_loop(self._arm_writer_locked)  # not under the lock: it takes it

    def wait_drained(self, timeout: float = 5.0) -> None:
        """Wait (not on the loop) while more than ``HIGH_WATER_BYTES`` are unwritten,
        writing as the socket takes them; at most ``timeout`` seconds."""
        if len(self._unwritten) <= HIGH_WATER_BYTES or self.on_loop_thread():
            return
        poller = select.poll()
        poller.register(self._fd, select.POLLOUT)
        deadline = time.monotonic() + timeout
        while len(self._unwritten) > HIGH_WATER_BYTES and time.monotonic() < deadline:
            if self._closed or self._broken:
                return
            if poller.poll(_POLL_MS):
                with self._lock:
                    self._write_unwritten()

    def _arm_writer_locked(self) -> None:
        with self._lock:
            self._arm_writer()

    def _arm_writer(self) -> None:
        """Have the loop write the unwritten bytes when it can (on the loop, lock held)."""
        if self._reading and self._unwritten and not self._writer_armed:
            self._writer_armed = True
            self._loop.add_writer(self._fd, self._writable)

    def _writable(self) -> None:
        with self._lock:
            self._write_unwritten()
            if not self._unwritten and self._writer_armed:
                self._writer_armed = False
                self._loop.remove_writer(self._fd)

    def _write_unwritten(self) -> None:
        """Write what the socket takes of the unwritten bytes (lock held)."""
        if not self._unwritten or self._closed:
            return
        try:
            sent = self._socket.send(self._unwritten)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._broken = True
            self._unwritten.clear()
            return
        del self._unwritten[:sent]


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
