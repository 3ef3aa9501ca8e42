"""``posekit up`` (the README's run command) serves the API with a first session."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any

import httpx
from support.ports import free_port


def test_posekit_up_serves_a_first_session_and_prints_its_urls() -> None:
    port = free_port()
    process = _posekit_up(port, "humanoid")
    try:
        text = "".join(_lines_until_served(process))
        assert f"http://127.0.0.1:{port}" in text
        sessions = httpx.get(f"http://127.0.0.1:{port}/api/sessions", timeout=10).json()
        assert [s["robot"] for s in sessions] == ["humanoid"]
        assert f"/viewer/{sessions[0]['id']}" in text
        assert f"/api/sessions/{sessions[0]['id']}/stream" in text
    finally:
        process.terminate()
        process.wait(20)


def test_sigterm_to_the_process_group_stops_the_server_cleanly() -> None:
    """``timeout``, ``kill -- -PGID`` and systemd stop every process of the group at once:
    the server exits cleanly."""
    port = free_port()
    process = _posekit_up(port, "arm7", start_new_session=True)  # its own process group
    lines: list[str] = []
    try:
        lines += _lines_until_served(process)
        url = f"http://127.0.0.1:{port}/api/sessions"
        sid = httpx.get(url, timeout=10).json()[0]["id"]
        deadline = time.monotonic() + 30  # a solved state
        while not httpx.get(f"{url}/{sid}/state", timeout=10).json()["solve_us"] > 0:
            assert time.monotonic() < deadline, "no solved state"
            time.sleep(0.1)
        os.killpg(process.pid, signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
        lines.append(output)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
    text = "".join(lines)
    # uvicorn shuts down gracefully, then exits by the signal it caught.
    assert process.returncode in (0, -signal.SIGTERM), text
    assert "restarted it" not in text, text


def _posekit_up(port: int, robot: str, **popen: Any) -> subprocess.Popen[str]:
    """``posekit up`` in a subprocess, its output (stdout and stderr) on a pipe."""
    return subprocess.Popen(
        [sys.executable, "-m", "posekit.cli", "up", "--port", str(port), "--robot", robot],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        **popen,
    )


def _lines_until_served(process: subprocess.Popen[str]) -> list[str]:
    """The lines it prints up to its first session's stream URL (at most 60 s)."""
    lines: list[str] = []
    deadline = time.monotonic() + 60
    while not any("stream" in line for line in lines):
        assert time.monotonic() < deadline, lines
        line = process.stdout.readline() if process.stdout is not None else ""
        assert line, f"posekit up exited: {lines}"
        lines.append(line)
    return lines
