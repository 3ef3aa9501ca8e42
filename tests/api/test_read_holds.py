"""A stream client's socket is left unread while its target waits for an answer
(posekit.api.target_credit's hold, posekit.ws_protocol's ``hold_reads``): what it sends
meanwhile stays in the server's kernel receive queue, and once the answer comes it is
read in one go and only its newest target is applied — on a live server, observed in
``/proc/net/tcp``."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
from support.servers import LiveServer
from support.streams import next_message, open_stream, recv


def _unread_bytes(server_port: int, client_port: int) -> int:
    """The server's receive queue on the connection from ``client_port`` (bytes the
    kernel holds that the server has not read)."""
    local, remote = f"0100007F:{server_port:04X}", f"0100007F:{client_port:04X}"
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1] == local and fields[2] == remote:
            return int(fields[4].split(":")[1], 16)
    raise AssertionError(f"no server socket for client port {client_port}")


def _target(ref: int, y: float) -> str:
    return json.dumps({"type": "target", "task": "ee", "position": [0.3, y, 0.4], "ref": ref})


def test_targets_sent_while_one_waits_stay_unread_and_only_the_newest_is_applied(
    server: LiveServer, client: httpx.Client, arm: str
) -> None:
    # One step a second, never parked: an answer is up to a second away.
    solver = {"tolerance": 1e-300, "rate_hz": 1.0}
    assert client.patch(f"/api/sessions/{arm}/solver", json=solver).is_success
    with open_stream(server, arm) as ws:
        hello = recv(ws)
        assert hello["type"] == "hello"
        client_port = ws.socket.getsockname()[1]
        next_message(ws, lambda m: m["type"] == "state", what="a cadence step")
        revision = client.get(f"/api/sessions/{arm}").json()["revision"]
        ws.send(_target(1, 0.0))  # applied at once; answered by the next step
        time.sleep(0.1)
        ws.send(_target(2, 0.01))  # waits for that answer: the server stops reading
        time.sleep(0.1)
        for ref in range(3, 13):
            ws.send(_target(ref, 0.01 * ref))
        deadline, unread = time.monotonic() + 0.3, 0
        while not unread and time.monotonic() < deadline:
            unread = _unread_bytes(server.port, client_port)
        assert unread > 0  # refs 3-12 sit in the kernel, unread
        refs: list[Any] = []
        while 12 not in refs:
            state = next_message(ws, lambda m: m["type"] == "state", what="the answer")
            refs.append(state["ref"])
        assert _unread_bytes(server.port, client_port) == 0
    # States answering ref 1, then the one of ref 12: refs 2-11 were never applied.
    assert 1 in refs and not set(refs) & set(range(2, 12)), refs
    applied = client.get(f"/api/sessions/{arm}").json()["revision"] - revision
    assert applied == 2  # ref 1 and ref 12
