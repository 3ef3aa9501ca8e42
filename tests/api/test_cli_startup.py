"""``posekit`` on the command line: readable help, and a busy port reported before
anything is announced."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import httpx
from support.ports import free_port
from support.waiting import wait_for

COMMAND = [sys.executable, "-m", "posekit.cli"]


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


def _run(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*COMMAND, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ),
    )


def test_help_is_plain_text_and_names_the_commands() -> None:
    shown = _run("--help")
    assert shown.returncode == 0
    assert "``" not in shown.stdout and ":mod:" not in shown.stdout
    assert "'posekit up' serves" in shown.stdout and "'posekit demo'" in shown.stdout
    up = _run("up", "--help").stdout
    assert "--port" in up and "--log-level" in up and "POSEKIT_LOG_LEVEL" in up


def test_a_busy_port_is_reported_before_anything_is_announced() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = _run("up", "--port", str(port), "--robot", "arm7")
        assert result.returncode != 0
        assert result.stderr.strip() == (
            f"posekit: port {port} is in use; use --port or POSEKIT_PORT"
        )
        assert result.stdout == ""  # no "serving on", no session links


def test_the_port_setting_is_checked_too() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [*COMMAND, "up", "--robot", "none"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "POSEKIT_PORT": str(port)},
        )
        assert result.returncode != 0 and f"port {port} is in use" in result.stderr
        assert "serving on" not in result.stdout


def test_a_free_port_is_served_once_bound() -> None:
    port = free_port()
    process = subprocess.Popen(
        [*COMMAND, "up", "--port", str(port), "--robot", "none"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        line = process.stdout.readline() if process.stdout else ""
        assert line.startswith(f"posekit: serving on http://127.0.0.1:{port}")
        # Announced only once bound: a second server on that port is refused at once.
        second = _run("up", "--port", str(port), "--robot", "none")
        assert second.returncode != 0 and "is in use" in second.stderr
        assert wait_for(lambda: _healthy(port), timeout=30, what="the server answers")
    finally:
        process.terminate()
        process.wait(20)
