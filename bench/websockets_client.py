"""``bench/server_load.py``'s default clients: websockets' asyncio client, one per session,
each with a coroutine sending targets and one reading (and decoding) every message."""

from __future__ import annotations

import asyncio
import json
import math
import time

from posekit.sessions.live import state_frame
from session_load import ClientMode, SessionLoad
from websockets.asyncio.client import connect


async def drive(
    url: str, load: SessionLoad, stop: asyncio.Event, phase: float, mode: ClientMode
) -> None:
    """Send targets at ``mode.target_hz`` (none at 0) and read states until ``stop``
    (binary state frames are decoded with :func:`posekit.sessions.live.state_frame.decode`)."""
    async with connect(f"{url}?format={mode.encoding}", max_size=1 << 22) as ws:
        json.loads(await ws.recv())  # hello

        async def send() -> None:
            if mode.target_hz <= 0.0:
                return
            period = 1.0 / mode.target_hz
            tick = time.monotonic() + phase * period
            while not stop.is_set():
                await asyncio.sleep(max(0.0, tick - time.monotonic()))
                tick += period
                if mode.polite and load.next_ref < len(load.sent):
                    continue  # the previous target is not answered yet
                ref = len(load.sent)
                angle = 2 * math.pi * 0.25 * time.monotonic() + phase * 6.28
                x, y, z = load.center
                position = [x + 0.05 * math.cos(angle), y + 0.05 * math.sin(angle), z]
                load.sent[ref] = time.perf_counter()
                message = {"type": "target", "task": load.kind.task, "position": position}
                await ws.send(json.dumps({**message, "ref": ref}))

        async def receive() -> None:
            async for raw in ws:  # every message is read and decoded, as a viewer would
                now = time.perf_counter()
                message = state_frame.decode(raw) if isinstance(raw, bytes) else json.loads(raw)
                if message["type"] != "state":
                    continue
                load.streaming = True
                if load.measuring:
                    load.states += 1
                    load.throttled += bool(message.get("throttled"))
                    load.last_revision = message["revision"]
                    if load.first_revision is None:
                        load.first_revision = load.last_revision
                ref = message["ref"]
                if ref is None:
                    continue
                while load.next_ref <= ref:
                    if load.measuring and load.next_ref in load.sent:
                        load.latencies.append(now - load.sent[load.next_ref])
                    load.next_ref += 1

        tasks = [asyncio.create_task(send()), asyncio.create_task(receive())]
        try:
            await stop.wait()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
