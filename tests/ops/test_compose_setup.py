"""The compose step of ``make test`` (``tools/ensure_compose.sh``): use a compose CLI that
is there, install Debian's docker-compose through apt where apt exists, otherwise let
the compose-file tests skip with the reason, except under CI."""

from __future__ import annotations

import subprocess
from pathlib import Path

from support.setup_steps import SH, fake_tool, run_step


def _step(path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The compose step with only ``path`` to look in (no real docker, apt or sudo)."""
    return run_step("ensure_compose.sh", path, **env)


def test_docker_compose_there_is_used(tmp_path: Path) -> None:
    fake_tool(tmp_path, "docker", '[ "$1 $2" = "compose version" ]')
    result = _step(tmp_path)
    assert result.returncode == 0 and "docker compose" in result.stdout
    assert "installing" not in result.stdout


def test_a_docker_without_compose_falls_back_to_docker_compose(tmp_path: Path) -> None:
    fake_tool(tmp_path, "docker", "exit 1")  # the client alone, as on this machine
    compose = fake_tool(tmp_path, "docker-compose", "exit 0")
    result = _step(tmp_path)
    assert result.returncode == 0 and str(compose) in result.stdout


def test_without_one_apt_installs_debians(tmp_path: Path) -> None:
    log = tmp_path / "apt.log"
    fake_tool(tmp_path, "id", "echo 0")  # root: no sudo
    fake_tool(
        tmp_path,
        "apt-get",
        f'echo "$@" >> {log}\n'
        f'case "$*" in *"install -y -qq docker-compose"*) printf "#!{SH}\\nexit 0\\n" > '
        f"{tmp_path}/docker-compose; /bin/chmod +x {tmp_path}/docker-compose;; esac",
    )
    fake_tool(tmp_path, "env", 'shift; "$@"')  # env DEBIAN_FRONTEND=… apt-get …
    result = _step(tmp_path)
    assert result.returncode == 0, result.stderr
    assert "installing Debian's docker-compose" in result.stdout
    assert f"{tmp_path}/docker-compose" in result.stdout
    assert log.read_text().splitlines() == ["update -qq", "install -y -qq docker-compose"]


def test_without_one_or_apt_the_tests_skip_except_in_ci(tmp_path: Path) -> None:
    outside = _step(tmp_path)
    assert outside.returncode == 0
    assert "no compose CLI found" in outside.stderr and "no apt-get" in outside.stderr
    in_ci = _step(tmp_path, CI="1")
    assert in_ci.returncode != 0 and "CI validates the compose files" in in_ci.stderr
