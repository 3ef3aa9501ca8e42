"""``GET /api/sessions/{id}/export.py`` and ``/export.key`` on a live server.

The session is paused, so its q holds still; the script is then run in a subprocess for
N steps and compared with a session built from the same spec (``GET …/spec``) stepped N
times in this process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import numpy as np
from posekit.robots import RobotRegistry
from posekit.sessions import Session, SessionSpec
from support.waiting import wait_for


def _pause(client: httpx.Client, session_id: str) -> list[float]:
    """Pause the session; its q once nothing moves it any more."""
    assert client.patch(f"/api/sessions/{session_id}/solver", json={"paused": True}).is_success
    state = wait_for(
        lambda: (
            (s := client.get(f"/api/sessions/{session_id}/state").json())["status"] == "paused"
            and s
        ),
        what="the session paused",
    )
    return list(state["q"])


def test_the_exported_script_solves_as_the_session(
    client: httpx.Client, arm: str, tmp_path: Path
) -> None:
    task = client.patch(f"/api/sessions/{arm}/tasks/ee", json={"position_cost": 2.5})
    assert task.is_success
    q = _pause(client, arm)
    client.patch(f"/api/sessions/{arm}/tasks/ee", json={"target": {"position": [0.42, 0.15, 0.35]}})
    response = client.get(f"/api/sessions/{arm}/export.py")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/x-python")
    assert f'filename="posekit_{arm}.py"' in response.headers["content-disposition"]
    script = tmp_path / "tuned.py"
    script.write_text(response.text)
    assert "position_cost=2.5" in response.text
    # From the session's q, unchanged by zero steps.
    run = subprocess.run([sys.executable, str(script), "--steps", "0"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["q"] == q
    # N steps of the script and of the same spec in a session here.
    spec = SessionSpec.model_validate(client.get(f"/api/sessions/{arm}/spec").json())
    registry = RobotRegistry(menagerie=False)
    local = Session("local", spec.model_copy(update={"solver": spec.solver.model_copy(
        update={"paused": False})}), registry.model("arm7"), "arm7")  # fmt: skip
    for _ in range(25):
        local.step()
    run = subprocess.run([sys.executable, str(script), "--steps", "25"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)["q"]
    assert np.linalg.norm(np.array(result) - q) > 1e-2  # it moved toward the new target
    np.testing.assert_allclose(result, local.q, rtol=0.0, atol=1e-9)


def test_the_pose_exports_as_a_keyframe(client: httpx.Client, arm: str) -> None:
    q = _pause(client, arm)
    response = client.get(f"/api/sessions/{arm}/export.key", params={"name": "grasp_1"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/xml")
    line = response.text.strip()
    assert line.startswith('<key name="grasp_1" qpos="') and line.endswith('"/>')
    assert [float(v) for v in line.split('qpos="')[1].split('"')[0].split()] == q
    default = client.get(f"/api/sessions/{arm}/export.key").text
    assert default.startswith('<key name="posekit"')


def test_export_errors(client: httpx.Client, arm: str) -> None:
    before = client.get(f"/api/sessions/{arm}/spec").json()
    bad = client.get(f"/api/sessions/{arm}/export.key", params={"name": 'a"><x'})
    assert bad.status_code == 422 and bad.json()["code"] == "invalid"
    assert client.get(f"/api/sessions/{arm}/spec").json()["tasks"] == before["tasks"]
    for path in ("export.py", "export.key"):
        missing = client.get(f"/api/sessions/no_such_session/{path}")
        assert missing.status_code == 404
