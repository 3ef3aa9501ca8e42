"""``posekit up`` (the README's run command) serves the API with a first session."""

from __future__ import annotations

import os
import signal
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


def test_sigterm_to_the_process_group_stops_the_server_without_restarting_solvers() -> None:
    """``timeout``, ``kill -- -PGID`` and systemd stop every process of the group at once:
    the solver processes leave the stopping to the server process, which exits cleanly
    instead of restarting a solver process it is about to stop."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "posekit.cli", "up", "--port", str(port), "--robot", "arm7"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        start_new_session=True,
    )
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 60
        while not any("stream" in line for line in lines):
            assert time.monotonic() < deadline, lines
            line = process.stdout.readline()
            assert line, f"posekit up exited: {lines}"
            lines.append(line)
        url = f"http://127.0.0.1:{port}/api/sessions"
        sid = httpx.get(url, timeout=10).json()[0]["id"]
        deadline = time.monotonic() + 30  # a state solved by the solver process
        while not httpx.get(f"{url}/{sid}/state", timeout=10).json()["solve_us"] > 0:
            assert time.monotonic() < deadline, "no state from the solver process"
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
