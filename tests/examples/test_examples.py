"""The scripts of examples/ run as their docstrings say, and do what they print."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import sync_playwright
from posekit.sessions import SessionManager
from posekit.settings import Settings
from support.browser import require_browser
from support.models import offline_registry
from support.ports import free_port
from support.processes import first_answer
from support.servers import LiveServer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TOKEN = "example-token"


def _run(script: str, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, EXAMPLES / script, *args], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_engine_alone_draws_its_circle_within_a_tenth_of_a_millimetre() -> None:
    printed = _run("engine_alone.py", "--laps", "1")
    errors = [float(mm) for mm in re.findall(r"position error ([0-9.]+) mm", printed)]
    assert len(errors) == 4 and max(errors) < 0.1, printed


@pytest.fixture
def guarded_server() -> Iterator[LiveServer]:
    settings = Settings.from_env({}).model_copy(update={"token": TOKEN})
    live = LiveServer(SessionManager(offline_registry()), settings).start()
    yield live
    live.stop()


def test_the_remote_session_drags_the_hand_and_leaves_nothing_behind(
    guarded_server: LiveServer,
) -> None:
    printed = _run("remote_session.py", "--url", guarded_server.base_url, "--token", TOKEN)
    hand_error = float(re.search(r"'ee': ([-+0-9.e]+)", printed)[1])  # type: ignore[index]
    assert hand_error < 1e-3, printed
    assert "'ee': 0.1" in printed.splitlines()[2]  # the reweighted orientation cost
    sessions = httpx.get(
        f"{guarded_server.base_url}/api/sessions", headers={"authorization": f"Bearer {TOKEN}"}
    )
    assert sessions.json() == []


def test_tuning_with_takes_ranks_the_weight_sets_by_what_they_trade(
    guarded_server: LiveServer,
) -> None:
    """One drag replayed through three weight sets: the default tracks the hand best, a
    stiff posture worst but with the slowest joints."""
    printed = _run("tune_with_takes.py", "--url", guarded_server.base_url, "--token", TOKEN)
    rows = {
        line[:18].strip(): [float(v) for v in re.findall(r"\d+\.\d+", line[18:])[:3]]
        for line in printed.splitlines()[1:]
    }
    assert list(rows) == ["default weights", "soft orientation", "stiff posture"], printed
    assert rows["default weights"][0] < rows["soft orientation"][0] < rows["stiff posture"][0]
    assert rows["stiff posture"][2] < rows["default weights"][2]  # peak joint speed


@pytest.mark.browser
def test_the_viser_loop_serves_the_arm_and_its_error_to_a_browser() -> None:
    port = free_port()
    script = subprocess.Popen(
        [sys.executable, EXAMPLES / "viser_drag.py", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        first_answer(script, f"http://127.0.0.1:{port}/", timeout=120)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=require_browser())
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{port}/")
            page.get_by_text("Hand error (mm)").wait_for(timeout=60_000)
            browser.close()
    finally:
        script.terminate()
        script.wait(timeout=30)
