"""The nginx step of ``make test`` (``tools/ensure_nginx.sh``) and the tests' nginx
lookup: use an nginx that is there, install Debian's through apt where apt exists,
otherwise let the cluster tests skip with the reason, except under CI."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.nginx import find_nginx
from support.setup_steps import SH, fake_tool, run_step


def _step(path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The nginx step with only ``path`` to look in (no real nginx, apt or sudo)."""
    return run_step("ensure_nginx.sh", path, POSEKIT_NGINX_PATH=str(path), **env)


def test_an_nginx_there_is_used(tmp_path: Path) -> None:
    nginx = fake_tool(tmp_path, "nginx", "exit 0")
    result = _step(tmp_path)
    assert result.returncode == 0 and str(nginx) in result.stdout
    assert "installing" not in result.stdout


def test_without_nginx_apt_installs_debians(tmp_path: Path) -> None:
    fake_tool(tmp_path, "id", "echo 1000")  # not root: through sudo
    log = tmp_path / "apt.log"
    fake_tool(tmp_path, "sudo", f'echo sudo >> {log}\n"$@"')
    fake_tool(
        tmp_path,
        "apt-get",
        f'echo "$@" >> {log}\n'
        f'case "$*" in *"install -y -qq nginx-light"*) printf "#!{SH}\\nexit 0\\n" > '
        f"{tmp_path}/nginx; /bin/chmod +x {tmp_path}/nginx;; esac",
    )
    fake_tool(tmp_path, "env", 'shift; "$@"')  # env DEBIAN_FRONTEND=… apt-get …
    result = _step(tmp_path)
    assert result.returncode == 0, result.stderr
    assert "installing Debian's nginx" in result.stdout and f"{tmp_path}/nginx" in result.stdout
    assert [line for line in log.read_text().splitlines() if line != "sudo"] == [
        "update -qq",
        "install -y -qq nginx-light",
    ]


def test_without_nginx_or_apt_the_tests_skip_except_in_ci(tmp_path: Path) -> None:
    outside = _step(tmp_path)
    assert outside.returncode == 0
    assert "no nginx found" in outside.stderr and "no apt-get" in outside.stderr
    assert "will be skipped" in outside.stderr
    in_ci = _step(tmp_path, CI="1")
    assert in_ci.returncode != 0 and "CI runs the cluster tests" in in_ci.stderr


def test_the_tests_find_the_same_nginx(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("POSEKIT_NGINX_PATH", str(tmp_path))
    monkeypatch.delenv("POSEKIT_NGINX", raising=False)
    assert find_nginx() is None
    nginx = fake_tool(tmp_path, "nginx", "exit 0")
    assert find_nginx() == str(nginx)
    monkeypatch.setenv("POSEKIT_NGINX", "no-such-nginx")
    assert find_nginx() is None
