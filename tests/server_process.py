"""``posekit up`` in a subprocess, for tests of the deployed server (restarts, SIGKILL,
environment settings). Importable as ``server_process`` (``tests`` is on the path)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ServerProcess:
    """``posekit up`` in a subprocess with the given ``POSEKIT_*`` environment."""

    def __init__(self, robot: str = "none", **environment: str) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, **environment)
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "posekit.cli",
                "up",
                "--port",
                str(self.port),
                "--robot",
                robot,
            ],
            env=env,
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60.0
        while True:
            try:
                if httpx.get(self.url + "/api/health", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("posekit up did not start")
            time.sleep(0.2)

    def ws_url(self, session_id: str) -> str:
        return f"ws://127.0.0.1:{self.port}/api/sessions/{session_id}/stream"

    def stop(self, kill: bool = False) -> None:
        self.process.send_signal(signal.SIGKILL if kill else signal.SIGINT)
        self.process.wait(timeout=30)
