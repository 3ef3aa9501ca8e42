"""``posekit up``'s terminal: opening and closing a viewer prints nothing of viser's own
(its banner with an internal address, "(viser) Server stopped"), while posekit's own
lines still appear."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import viser
from support.ports import free_port
from support.servers import REPO
from support.waiting import wait_for
from websockets.sync.client import connect


def test_opening_and_closing_a_viewer_prints_nothing_of_viser(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "terminal.txt"
    with log.open("w") as terminal:
        server = subprocess.Popen(
            [sys.executable, "-m", "posekit.cli", "up", "--port", str(port), "--robot", "arm7"],
            cwd=REPO, stdout=terminal, stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _healthy(base), timeout=60.0, what="posekit up answering", poll=0.2)
        (session,) = httpx.get(f"{base}/api/sessions").json()
        url = f"ws://127.0.0.1:{port}/viewer/{session['id']}"
        with connect(url, subprotocols=[f"viser-v{viser.__version__}"], max_size=None) as socket:
            socket.recv(timeout=30)  # the viewer started and sends its scene
        wait_for(lambda: httpx.get(f"{base}/api/sessions/{session['id']}").json()["watchers"] == 0,
                 what="the viewer closed")  # fmt: skip
        assert httpx.delete(f"{base}/api/sessions/{session['id']}").status_code == 204  # stops it
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)
    text = log.read_text()
    assert "posekit" in text  # posekit's own lines are there
    for viser_text in ("viser", "Server stopped", "╭", "Websocket"):
        assert viser_text not in text, text


def _healthy(base: str) -> bool:
    try:
        return httpx.get(f"{base}/api/health", timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False
