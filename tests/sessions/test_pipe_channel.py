"""Our end of a solver pipe, on an event loop: multiprocessing's framing both ways, the
loop never blocked by a peer that does not read, the pipe's end reported once."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from multiprocessing import Pipe
from multiprocessing.connection import Connection

import pytest
from posekit.sessions.loops.event_loop_thread import EventLoopThread
from posekit.sessions.loops.pipe_channel import BUFFER_BYTES, HIGH_WATER_BYTES, PipeChannel
from support.waiting import wait_for


class Received:
    """What a channel handed over, and on which thread."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.threads: set[int] = set()
        self.eofs = 0

    def frame(self, payload: memoryview) -> None:
        self.frames.append(bytes(payload))
        self.threads.add(threading.get_ident())

    def eof(self) -> None:
        self.eofs += 1


@pytest.fixture
def io() -> Iterator[EventLoopThread]:
    thread = EventLoopThread("test-pipe")
    yield thread
    thread.stop()


def loop_thread(io: EventLoopThread) -> int | None:
    ident: list[int] = []
    io.loop.call_soon_threadsafe(lambda: ident.append(threading.get_ident()))
    return wait_for(lambda: ident[0] if ident else None, what="the loop's thread")


def channel_pair(
    loop: asyncio.AbstractEventLoop, received: Received
) -> tuple[PipeChannel, Connection]:
    ours, theirs = Pipe(duplex=True)
    channel = PipeChannel(ours, loop, received.frame, received.eof)
    channel.open()
    return channel, theirs


def payloads() -> list[bytes]:
    """Sizes around the framing's cases: empty, small, one write (≤ 16 KiB) or two, and
    larger than the read buffer."""
    sizes = [0, 1, 100, 16384, 16385, 70_000, BUFFER_BYTES + 12_345, 3 * BUFFER_BYTES]
    return [bytes([k % 251]) * size for k, size in enumerate(sizes)]


def test_frames_sent_by_a_connection_arrive_whole_and_in_order_on_the_loop(
    io: EventLoopThread,
) -> None:
    received = Received()
    channel, theirs = channel_pair(io.loop, received)
    expected = payloads() * 3
    for payload in expected:
        theirs.send_bytes(payload)
    wait_for(lambda: len(received.frames) == len(expected), what="every frame")
    assert received.frames == expected
    assert received.threads == {loop_thread(io)}
    assert channel.detach(5.0)
    channel.close()


def test_frames_sent_by_the_channel_are_read_by_a_connection(io: EventLoopThread) -> None:
    channel, theirs = channel_pair(io.loop, Received())
    expected = payloads()
    for payload in expected:
        channel.send(payload)  # from this thread
    io.loop.call_soon_threadsafe(lambda: [channel.send(p) for p in expected])  # from the loop
    assert [theirs.recv_bytes() for _ in range(2 * len(expected))] == expected * 2
    assert channel.detach(5.0)
    channel.close()


def test_the_loop_reads_while_its_peer_does_not_read_what_it_sends(io: EventLoopThread) -> None:
    """Both sides write more than a pipe holds: the loop keeps the rest of its frames and
    keeps reading, so the peer's writes complete, and then its reads get every frame."""
    received = Received()
    channel, theirs = channel_pair(io.loop, received)
    ours = [bytes([k]) * 200_000 for k in range(40)]  # 8 MB: far more than the pipe holds
    sent = threading.Event()

    def send_all() -> None:
        for payload in ours:
            channel.send(payload)
        sent.set()

    io.loop.call_soon_threadsafe(send_all)
    assert sent.wait(30.0)  # the loop did not wait for a reader
    theirs_payloads = [bytes([k]) * 300_000 for k in range(20)]
    for payload in theirs_payloads:  # blocks until the loop has read enough
        theirs.send_bytes(payload)
    wait_for(lambda: len(received.frames) == len(theirs_payloads), what="their frames")
    assert received.frames == theirs_payloads
    assert [theirs.recv_bytes() for _ in ours] == ours
    assert channel.detach(5.0)
    channel.close()


def test_a_thread_waits_for_a_large_backlog_to_drain(io: EventLoopThread) -> None:
    channel, theirs = channel_pair(io.loop, Received())
    payload = b"x" * (HIGH_WATER_BYTES + 1)
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.extend(theirs.recv_bytes() for _ in range(3)))
    reader.start()
    for _ in range(3):
        channel.send(payload)
        channel.wait_drained()
    reader.join(30.0)
    assert read == [payload] * 3
    assert channel.detach(5.0)
    channel.close()


def test_the_end_of_the_pipe_is_reported_once_and_a_failing_handler_skips_one_frame(
    io: EventLoopThread,
) -> None:
    received = Received()
    handled: list[bytes] = []

    def frame(payload: memoryview) -> None:
        if bytes(payload) == b"bad":
            raise ValueError("a handler failed")
        handled.append(bytes(payload))

    ours, theirs = Pipe(duplex=True)
    channel = PipeChannel(ours, io.loop, frame, received.eof)
    channel.open()
    for payload in (b"one", b"bad", b"two"):
        theirs.send_bytes(payload)
    theirs.close()
    wait_for(lambda: received.eofs == 1, what="the end of the pipe")
    assert handled == [b"one", b"two"]
    channel.send(b"to nobody")  # dropped, no error
    assert channel.detach(5.0)
    channel.close()
    assert received.eofs == 1
