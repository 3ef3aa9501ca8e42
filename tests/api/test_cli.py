"""``posekit up`` (the README's run command) serves the API with a first session."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
from support.ports import free_port


def test_posekit_up_serves_a_first_session_and_prints_its_urls() -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "posekit.cli", "up", "--port", str(port), "--robot", "humanoid"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        lines = []
        deadline = time.monotonic() + 60
        while not any("stream" in line for line in lines):
            assert time.monotonic() < deadline, lines
            line = process.stdout.readline()
            assert line, f"posekit up exited: {lines}"
            lines.append(line)
        text = "".join(lines)
        assert f"http://127.0.0.1:{port}" in text
        sessions = httpx.get(f"http://127.0.0.1:{port}/api/sessions", timeout=10).json()
        assert [s["robot"] for s in sessions] == ["humanoid"]
        assert f"/viewer/{sessions[0]['id']}" in text
        assert f"/api/sessions/{sessions[0]['id']}/stream" in text
    finally:
        process.terminate()
        process.wait(20)
