"""The Dockerfile and compose file say what the README promises (no Docker engine here)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]


def test_dockerfile_runs_as_a_user_with_a_healthcheck() -> None:
    lines = (REPO / "Dockerfile").read_text().splitlines()
    instructions = [line.split()[0] for line in lines if line and not line.startswith((" ", "#"))]
    assert (
        instructions[0] == "FROM"
        and "slim" in lines[[line.startswith("FROM") for line in lines].index(True)]
    )
    user = [line for line in lines if line.startswith("USER ")]
    assert user and user[-1].split()[1] not in ("root", "0")
    assert any(line.startswith("HEALTHCHECK") for line in lines)
    assert any("/api/health" in line for line in lines)
    cmd = next(line for line in lines if line.startswith("CMD ["))
    assert '"0.0.0.0"' in cmd and '"8000"' in cmd


def test_compose_serves_one_port_with_a_data_volume() -> None:
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    service = compose["services"]["posekit"]
    assert service["build"] == "."
    assert [port.split(":")[-1] for port in service["ports"]] == ["8000"]
    assert any(volume.endswith(":/data") for volume in service["volumes"])
    assert "posekit-data" in compose["volumes"]
    assert {"POSEKIT_TOKEN", "POSEKIT_CORS_ORIGINS"} <= set(service["environment"])


def _instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions, continuation lines joined: (keyword, arguments)."""
    text = (REPO / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    return [
        (line.split(None, 1)[0], line.split(None, 1)[1])
        for line in lines
        if line and not line.startswith("#")
    ]


def _env() -> dict[str, str]:
    pairs = " ".join(args for keyword, args in _instructions() if keyword == "ENV").split()
    return dict(pair.split("=", 1) for pair in pairs)


def test_sessions_and_downloaded_robots_live_on_the_data_volume() -> None:
    volumes = [args for keyword, args in _instructions() if keyword == "VOLUME"]
    assert volumes == ['["/data"]']
    env = _env()
    assert env["POSEKIT_DB"].startswith("/data/")
    assert env["MENAGERIE_CACHE_DIR"].startswith("/data/")  # read by mujoco-menagerie


def test_the_build_warms_every_kernel_as_the_user_who_serves() -> None:
    instructions = _instructions()
    runs = [args for keyword, args in instructions if keyword == "RUN"]
    assert "python -m posekit.warmup" in runs
    warmup = instructions.index(("RUN", "python -m posekit.warmup"))
    users = [index for index, (keyword, _) in enumerate(instructions) if keyword == "USER"]
    assert users and users[0] < warmup  # into the serving user's NUMBA_CACHE_DIR
    assert _env()["NUMBA_CACHE_DIR"].startswith("/home/posekit/")


def test_the_image_installs_the_locked_versions() -> None:
    instructions = _instructions()
    assert ("COPY", "requirements.lock ./") in instructions
    install = next(args for keyword, args in instructions if "pip install" in args)
    assert '--constraint requirements.lock ".[server,cluster]"' in install


def test_the_lock_pins_every_runtime_dependency_and_no_dev_tool() -> None:
    lines = [
        line
        for line in (REPO / "requirements.lock").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    pins = {canonicalize_name(name): Version(version)
            for name, version in (line.split("==") for line in lines)}  # fmt: skip
    assert len(pins) == len(lines)  # every line is name==version
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    served = [*project["dependencies"], *extras["viewer"], *extras["server"], *extras["cluster"]]
    for requirement in map(Requirement, served):
        name = canonicalize_name(requirement.name)
        if name == "posekit":
            continue  # an extra naming another of posekit's
        assert name in pins, f"{name} is not in requirements.lock (run make lock)"
        assert requirement.specifier.contains(pins[name]), f"{name}=={pins[name]} is stale"
    dev_only = {"pytest", "ruff", "mypy", "playwright", "schemathesis", "httpx"}
    assert not dev_only & set(pins)
