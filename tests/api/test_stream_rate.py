"""The stream's rate limit holds for states written at once: a session stepped at 60 Hz
streams about ``stream_hz`` states a second (bursts of two), not 60."""

from __future__ import annotations

import time

import httpx
from support.servers import LiveServer
from support.streams import next_message, open_stream, recv


def test_a_fast_session_streams_at_its_stream_rate(
    server: LiveServer, client: httpx.Client, arm: str
) -> None:
    ee = client.get(f"/api/sessions/{arm}/tasks/ee").json()["target"]
    far = [ee["position"][0] + 2.0, *ee["position"][1:]]  # out of reach: it never parks
    assert client.patch(
        f"/api/sessions/{arm}/tasks/ee", json={"target": {"position": far}}
    ).is_success
    solver = {"tolerance": 1e-300, "rate_hz": 60.0, "stream_hz": 4.0}
    assert client.patch(f"/api/sessions/{arm}/solver", json=solver).is_success
    with open_stream(server, arm) as ws:
        assert recv(ws)["type"] == "hello"
        next_message(ws, lambda m: m["type"] == "state", timeout=120.0)  # a solver is warm
        states, seqs = 0, []
        start = time.monotonic()
        while (elapsed := time.monotonic() - start) < 2.0:
            message = recv(ws)
            if message["type"] == "state":
                states += 1
                seqs.append(message["seq"])
        assert seqs == sorted(seqs)
        assert seqs[-1] - seqs[0] > 3 * states  # the session stepped far more often
        assert 2 <= states <= 4.0 * (elapsed + 0.5) + 2  # the rate, one burst of two
