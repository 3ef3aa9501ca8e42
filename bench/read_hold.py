"""What holding an eager client's reads costs, and what it saves, in the server process.

The stream holds a client's reads while its target is in flight
(:mod:`posekit.api.target_credit`, :data:`posekit.ws_protocol.HOLD_READS`): what the
client sends meanwhile waits in the kernel and is read in one go when the answer comes.
Printed, each the median of ``--repeat`` timed loops [µs]:

- **a frame taken**: one client target frame through ``PosekitWebSocketProtocol`` (the
  frame read from the bytes, unmasked, UTF-8 checked) and the stream's own
  ``ClientMessages.take`` (size, the rate limit, msgspec's parse, the credit, where it
  replaces the target before it), in reads of ``--frames`` frames — what each target
  still costs once the reads are held;
- **a hold**: on a real socket of the event loop (uvloop), the transport's reads
  paused in one turn of the loop and resumed in the next (the ``epoll_ctl`` calls
  they cause), beyond two bare turns;
- **``FIONREAD``**: the check, on resuming, for bytes sent meanwhile
  (:func:`posekit.ws_protocol.bytes_waiting`);
- **a timer**: the overdue timer armed and cancelled, once per hold (the loop turning
  every 100 timers, as it frees cancelled timers in its turns).

A hold costs the three last ones once per answer; without it each target was a read of
its own (the event loop's wake-up, the ``read`` and the frame's Python).

    python bench/read_hold.py [--frames 8] [--loops 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from posekit.api.routes_stream import ClientMessages  # noqa: E402
from posekit.api.stream_limits import StreamLimits  # noqa: E402
from posekit.api.target_credit import TargetCredit  # noqa: E402
from posekit.api.token_bucket import TokenBucket  # noqa: E402
from posekit.ws_protocol import RECEIVE_NOW, PosekitWebSocketProtocol, bytes_waiting  # noqa: E402
from support.ws_protocols import masked, opened  # noqa: E402

TEXT = 0x81


def median_us(loop: Callable[[], None], count: int, repeat: int) -> float:
    """The median over ``repeat`` runs of ``loop`` (``count`` items each) [µs per item]."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        loop()
        runs.append((time.perf_counter() - start) / count * 1e6)
    return statistics.median(runs)


async def frame_taken(frames: int, loops: int, repeat: int) -> float:
    """[µs] per frame, in reads of ``frames`` target frames, every one replacing the
    waiting target before it (its previous target in flight, unanswered)."""
    opening = await opened(PosekitWebSocketProtocol)
    applied: list[Any] = []

    def apply(task: str, fields: Any, ref: Any) -> bool:
        applied.append(ref)
        return True

    credit: TargetCredit[Any] = TargetCredit(apply, lambda: len(applied), 3600.0)
    limits = StreamLimits(max_bytes=1 << 16, rate=0.0)  # no limit: nothing refused
    take = ClientMessages(None, limits, TokenBucket(1e9), credit, print).take  # never refuses
    opening.scope["extensions"][RECEIVE_NOW](take, credit.settle)
    messages = [
        {"type": "target", "task": "ee", "position": [0.3 + 1e-3 * i, 0.1, 0.4], "ref": i}
        for i in range(frames)
    ]
    read = b"".join(masked(TEXT, json.dumps(m).encode()) for m in messages)
    protocol = opening.protocol
    protocol.data_received(read)  # the first is applied; from now on they wait

    def reads() -> None:
        for _ in range(loops):
            protocol.data_received(read)

    result = median_us(reads, loops * frames, repeat)
    credit.close()
    for task in list(protocol.tasks):
        task.cancel()
    return result


async def turns(count: int, between: Callable[[int], None] | None = None) -> float:
    """[s] ``count`` pairs of loop turns, calling ``between(0)`` before the first and
    ``between(1)`` before the second of each pair."""
    start = time.perf_counter()
    for _ in range(count):
        if between is not None:
            between(0)
        await asyncio.sleep(0)
        if between is not None:
            between(1)
        await asyncio.sleep(0)
    return time.perf_counter() - start


async def primitives(loops: int, repeat: int) -> tuple[float, float, float]:
    """[µs] a pause and a resumption in two turns (beyond the bare turns), FIONREAD, and
    a timer armed and cancelled, on a real socket of the running loop."""
    ours, peer = socket.socketpair()
    loop = asyncio.get_running_loop()
    transport, _ = await loop.create_connection(asyncio.Protocol, sock=ours)

    def cycle(turn: int) -> None:
        (transport.pause_reading if turn == 0 else transport.resume_reading)()

    holds = []
    for _ in range(repeat):
        bare = await turns(loops)
        holds.append((await turns(loops, cycle) - bare) / loops * 1e6)

    def checks() -> None:
        for _ in range(loops):
            bytes_waiting(transport)

    timers = []
    for _ in range(repeat):  # a turn every 100: the loop frees cancelled timers in its turns
        start = time.perf_counter()
        for i in range(loops):
            loop.call_later(0.25, print).cancel()
            if i % 100 == 99:
                await asyncio.sleep(0)
        timers.append((time.perf_counter() - start) / loops * 1e6)
    result = (statistics.median(holds), median_us(checks, loops, repeat))
    result += (statistics.median(timers),)
    transport.close()
    peer.close()
    return result


async def main(args: argparse.Namespace) -> None:
    hold, check, timer = await primitives(args.loops, args.repeat)
    frame = await frame_taken(args.frames, args.loops, args.repeat)
    print(f"a frame taken (reads of {args.frames})    {frame:6.2f} µs")
    print(f"a hold (pause, turn, resume, turn)  {hold:6.2f} µs beyond the two turns")
    print(f"FIONREAD                            {check:6.2f} µs")
    print(f"a timer armed and cancelled         {timer:6.2f} µs")
    print(f"per answer: {hold + check + timer:.1f} µs of holding")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=8)
    parser.add_argument("--loops", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5)
    import uvloop

    uvloop.run(main(parser.parse_args()))
