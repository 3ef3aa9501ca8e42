"""The Dockerfile and compose file say what the README promises (no Docker engine here)."""

from __future__ import annotations

from pathlib import Path

import yaml

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
