"""Tune task weights on evidence: record one drag as a take, replay it through other
weights, compare the figures.

    make run                                   # or: posekit up (pip install 'posekit[server]')
    python examples/tune_with_takes.py [--url http://127.0.0.1:8000] [--token …]

The built-in arm's hand is dragged around a 10 cm circle over the websocket and asked
to tilt 20° at the same time. Then the take is replayed through three weight sets — the
default, a soft orientation (``orientation_cost`` 0.01) and a stiff posture
(``posture.cost`` 1) — and each one's figures are printed: the hand's RMS and largest
error, the fastest joint and the time at a joint limit. Only the public API is used.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
import urllib.request
from typing import Any

from websockets.sync.client import connect

RADIUS = 0.10  # [m]
MOVES = 60  # targets around the circle, at 20 Hz: a 3 s drag
TILT_DEG = 20.0  # the hand is also asked to tilt this much about the world's y axis
VARIANTS = [
    {"label": "default weights"},
    {"label": "soft orientation", "tasks": {"ee": {"orientation_cost": 0.01}}},
    {"label": "stiff posture", "tasks": {"posture": {"cost": 1.0}}},
]


def rest(url: str, token: str | None, method: str = "GET", body: Any = None) -> Any:
    """One REST call; its JSON answer."""
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read()) if response.status != 204 else None


def tilted(wxyz: list[float], angle: float) -> list[float]:
    """``wxyz`` turned by ``angle`` [rad] about the world's y axis (t ⊗ q)."""
    tw, ty = math.cos(angle / 2), math.sin(angle / 2)
    w, x, y, z = wxyz
    return [tw * w - ty * y, tw * x + ty * z, tw * y + ty * w, tw * z - ty * x]


def record(base: str, token: str | None, session: str) -> str:
    """Drag the hand around the circle while a take records it; the take's id."""
    take = rest(f"{base}/api/sessions/{session}/takes", token, "POST", {"name": "circle"})["id"]
    home = rest(f"{base}/api/sessions/{session}/tasks/ee", token)["target"]
    center, wxyz = home["position"], tilted(home["wxyz"], math.radians(TILT_DEG))
    stream = base.replace("http", "ws", 1) + f"/api/sessions/{session}/stream"
    headers = {"authorization": f"Bearer {token}"} if token else None
    with connect(stream, additional_headers=headers) as ws:
        for k in range(MOVES + 1):
            angle = 2 * math.pi * k / MOVES
            position = [
                center[0],
                center[1] + RADIUS * math.sin(angle),
                center[2] + RADIUS * (math.cos(angle) - 1),
            ]
            ws.send(
                json.dumps({"type": "target", "task": "ee", "position": position, "wxyz": wxyz})
            )
            time.sleep(0.05)
    return rest(f"{base}/api/sessions/{session}/takes/{take}/stop", token, "POST")["id"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--token", default=os.environ.get("POSEKIT_TOKEN"))
    args = parser.parse_args()
    base, token = args.url.rstrip("/"), args.token
    session = rest(f"{base}/api/sessions", token, "POST", {"robot": "arm7"})["id"]
    try:
        take = record(base, token, session)
        figures = rest(
            f"{base}/api/sessions/{session}/takes/{take}/compare",
            token,
            "POST",
            {"variants": VARIANTS},
        )
    finally:
        rest(f"{base}/api/sessions/{session}", token, "DELETE")
    print(f"{'weights':18s} {'hand RMS':>9s} {'hand max':>9s} {'peak speed':>11s}  at a limit")
    for row in figures:
        hand = row["tasks"]["ee"]
        print(
            f"{row['label']:18s} {hand['rms']:9.4f} {hand['max']:9.4f} "
            f"{row['peak_speed']:6.2f} rad/s  {row['seconds_at_limit']:.2f} s"
            f"   ({row['steps']} steps replayed in {row['replay_seconds']:.2f} s)"
        )


if __name__ == "__main__":
    main()
