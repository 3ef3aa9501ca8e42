"""``bench/lean_client.py``: the load bench's lean clients speak the stream's protocol and
measure what the websockets clients measure (the bench's figures rest on them)."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Generator, Iterator

import httpx
import pytest
from support.models import REPO_ROOT
from support.servers import LiveServer
from websockets.frames import OP_TEXT, Frame
from websockets.streams import StreamReader

if str(REPO_ROOT / "bench") not in sys.path:
    sys.path.append(str(REPO_ROOT / "bench"))

import lean_client
from session_load import SessionLoad


def parsed(data: bytes) -> Frame:
    """``data`` read by websockets' own frame parser, as a server reads a client's frame."""
    reader = StreamReader()
    reader.feed_data(data)
    parser: Generator[None, None, Frame] = Frame.parse(reader.read_exact, mask=True)
    try:
        next(parser)
    except StopIteration as done:
        assert not reader.buffer  # the whole frame read, nothing left over
        return done.value
    raise AssertionError("the frame is incomplete")


@pytest.mark.parametrize("size", [0, 125, 126, 4000])
def test_a_client_frame_is_what_websockets_reads_back(size: int) -> None:
    payload = bytes(range(256)) * (size // 256) + bytes(range(size % 256))
    frame = parsed(lean_client.client_frame(lean_client.TEXT, payload))
    assert (frame.opcode, frame.fin, frame.data) == (OP_TEXT, True, payload)


def test_a_payload_past_a_16_bit_length_is_refused() -> None:
    with pytest.raises(ValueError, match="at most 65535 bytes"):
        lean_client.client_frame(lean_client.TEXT, bytes(65536))


@pytest.fixture()
def server() -> Iterator[LiveServer]:
    live = LiveServer().start()
    try:
        yield live
    finally:
        live.stop()


def test_targets_are_applied_and_each_answer_is_timed(server: LiveServer) -> None:
    sid = httpx.post(f"{server.base_url}/api/sessions", json={"robot": "arm7"}).json()["id"]
    target = httpx.get(f"{server.base_url}/api/sessions/{sid}/tasks/ee").json()["target"]
    load = SessionLoad(sid, target["position"], measuring=True)
    url = f"ws://127.0.0.1:{server.port}/api/sessions/{sid}/stream?format=binary"

    async def drag() -> None:
        client = await lean_client.connect(url, load)
        for _ in range(3):
            client.send_target(0.0, polite=False)
            deadline = time.monotonic() + 10.0
            while load.next_ref < len(load.sent) and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
        client.send(lean_client.CLOSE, b"\x03\xe8")

    asyncio.run(drag())
    assert load.next_ref == 3 and len(load.latencies) == 3  # every target answered, timed
    assert all(0.0 < latency < 10.0 for latency in load.latencies)
    assert load.states >= 3 and load.last_revision >= 3  # each target applied is a revision
    moved = httpx.get(f"{server.base_url}/api/sessions/{sid}/tasks/ee").json()["target"]
    assert moved["position"][2] == pytest.approx(target["position"][2])  # z kept
    assert moved["position"][:2] != pytest.approx(target["position"][:2], abs=1e-3)
