"""The browser step of ``make test`` (``tools/ensure_browser.sh``) and the tests' browser
lookup: use a Chromium that is there, install Debian's through apt where apt exists,
otherwise let the browser tests skip with the reason, except under CI."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support.browser import find_browser, require_browser
from support.setup_steps import SH, fake_tool, run_step


def _step(path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The browser step with only ``path`` on the PATH (no real browser, apt or sudo)."""
    return run_step("ensure_browser.sh", path, **env)


def test_a_browser_on_the_path_is_used(tmp_path: Path) -> None:
    browser = fake_tool(tmp_path, "google-chrome", "exit 0")
    result = _step(tmp_path)
    assert result.returncode == 0 and str(browser) in result.stdout
    assert "installing" not in result.stdout


def test_posekit_browser_names_it(tmp_path: Path) -> None:
    fake_tool(tmp_path, "chromium", "exit 0")
    mine = fake_tool(tmp_path, "my-chromium", "exit 0")
    assert str(mine) in _step(tmp_path, POSEKIT_BROWSER=str(mine)).stdout
    missing = _step(tmp_path, POSEKIT_BROWSER="no-such-browser")
    assert missing.returncode == 0 and "POSEKIT_BROWSER=no-such-browser" in missing.stderr


def test_without_a_browser_apt_installs_debians_chromium(tmp_path: Path) -> None:
    fake_tool(tmp_path, "id", "echo 0")  # root: apt-get without sudo
    log = tmp_path / "apt.log"
    fake_tool(
        tmp_path,
        "apt-get",
        f'echo "$@" >> {log}\n'
        f'case "$*" in *install*) printf "#!{SH}\\nexit 0\\n" > {tmp_path}/chromium; '
        f"/bin/chmod +x {tmp_path}/chromium;; esac",
    )
    fake_tool(tmp_path, "env", 'shift; "$@"')  # env DEBIAN_FRONTEND=… apt-get …
    result = _step(tmp_path)
    assert result.returncode == 0, result.stderr
    assert "installing Debian's chromium" in result.stdout
    assert f"{tmp_path}/chromium" in result.stdout
    assert log.read_text().splitlines() == ["update -qq", "install -y -qq chromium"]


def test_without_browser_or_apt_the_tests_skip_except_in_ci(tmp_path: Path) -> None:
    outside = _step(tmp_path)
    assert outside.returncode == 0
    assert "no Chromium found" in outside.stderr and "no apt-get" in outside.stderr
    assert "will be skipped" in outside.stderr
    in_ci = _step(tmp_path, CI="1")
    assert in_ci.returncode != 0 and "CI runs the browser tests" in in_ci.stderr


def test_the_tests_find_the_same_browser(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("POSEKIT_BROWSER", raising=False)
    assert find_browser() is None
    browser = fake_tool(tmp_path, "chromium-browser", "exit 0")
    assert find_browser() == str(browser)
    monkeypatch.setenv("POSEKIT_BROWSER", "nowhere")
    assert find_browser() is None
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="POSEKIT_BROWSER='nowhere'"):
        require_browser()
    monkeypatch.setenv("CI", "1")
    with pytest.raises(pytest.fail.Exception, match="POSEKIT_BROWSER='nowhere'"):
        require_browser()
    assert os.environ["PATH"] == str(tmp_path)
