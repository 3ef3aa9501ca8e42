"""Sessions over REST on a live server: built-in and Menagerie robots, specs, q, solver."""

from __future__ import annotations

import time
from typing import Any

import httpx
import numpy as np
import pytest
from support.models import needs_menagerie
from support.servers import LiveServer
from support.streams import site_pose
from support.waiting import wait_for

MM = 1e-3


def _create(client: httpx.Client, **body: Any) -> dict[str, Any]:
    response = client.post("/api/sessions", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def _revision(client: httpx.Client, session_id: str) -> int:
    """The session's change counter now: states with at least this revision come after."""
    return client.get(f"/api/sessions/{session_id}").json()["revision"]


def _wait_state(
    client: httpx.Client,
    session_id: str,
    status: str = "converged",
    revision: int = 0,
    timeout: float = 20.0,
) -> dict[str, Any]:
    """The first polled state with this status solved after change ``revision``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = client.get(f"/api/sessions/{session_id}/state").json()
        if state["status"] == status and state["revision"] >= revision:
            return state
        time.sleep(0.02)
    raise AssertionError(f"session {session_id} not {status} after {timeout} s: {state}")


def test_default_session_is_the_arm_with_its_preset(client: httpx.Client) -> None:
    response = client.post("/api/sessions")
    assert response.status_code == 201, response.text
    session = response.json()
    try:
        assert session["robot"] == "arm7" and session["tasks"] == ["ee", "posture"]
        assert session["limits"] == ["configuration"]
        assert session["state"]["q"] == pytest.approx([0, 0.444, 0, -1.256, 0, 1.44, 0])
        assert session["links"]["stream"].endswith("/stream")
        listed = [s["id"] for s in client.get("/api/sessions").json()]
        assert session["id"] in listed
        assert client.get(f"/api/sessions/{session['id']}").json()["robot"] == "arm7"
    finally:
        assert client.delete(f"/api/sessions/{session['id']}").status_code == 204
    assert client.get(f"/api/sessions/{session['id']}").status_code == 404
    assert client.delete(f"/api/sessions/{session['id']}").status_code == 404


def test_session_without_preset_has_no_tasks(client: httpx.Client) -> None:
    session = _create(client, robot="arm7", preset=False)
    assert session["tasks"] == [] and session["limits"] == ["configuration"]
    client.delete(f"/api/sessions/{session['id']}")


def _drag(
    client: httpx.Client,
    server: LiveServer,
    session: dict,
    task: str,
    site: str,
    offset: list[float],
    tolerance: float = 1 * MM,
) -> None:
    """Move a frame task's target by ``offset`` over REST; the site must get there."""
    sid = session["id"]
    target = client.get(f"/api/sessions/{sid}/tasks/{task}").json()["target"]
    goal = np.add(target["position"], offset)
    response = client.patch(
        f"/api/sessions/{sid}/tasks/{task}", json={"target": {"position": goal.tolist()}}
    )
    assert response.status_code == 200, response.text
    state = _wait_state(client, sid, revision=_revision(client, sid))
    model = server.manager.registry.model(session["robot"], session["entry"])
    position, _ = site_pose(model, state["q"], site)
    assert np.linalg.norm(position - goal) < tolerance


def test_builtin_humanoid_session_moves_a_hand_with_feet_held(
    server: LiveServer, client: httpx.Client
) -> None:
    session = _create(client, robot="humanoid")
    try:
        assert session["tasks"] == [
            "left_hand",
            "right_hand",
            "left_foot",
            "right_foot",
            "com",
            "posture",
        ]
        model = server.manager.registry.model("humanoid")
        feet = [site_pose(model, session["state"]["q"], f)[0] for f in ("left_foot", "right_foot")]
        # The preset's posture (cost 1e-2 on floating bases) leaves a few mm of compromise.
        _drag(client, server, session, "left_hand", "left_hand", [0.1, 0.05, 0.1], 5 * MM)
        q = client.get(f"/api/sessions/{session['id']}/state").json()["q"]
        for foot, before in zip(("left_foot", "right_foot"), feet, strict=True):
            assert np.linalg.norm(site_pose(model, q, foot)[0] - before) < 2 * MM
    finally:
        client.delete(f"/api/sessions/{session['id']}")


@needs_menagerie
@pytest.mark.parametrize(
    ("robot", "task", "site", "offset"),
    [
        ("universal_robots_ur5e", "attachment_site", "attachment_site", [0.05, -0.1, 0.05]),
        ("unitree_g1", "left_palm", "left_palm", [0.05, 0.0, 0.08]),
        ("aloha", "left_gripper", "left/gripper", [0.0, 0.04, 0.05]),
    ],
)
def test_menagerie_sessions_solve(
    server: LiveServer,
    client: httpx.Client,
    robot: str,
    task: str,
    site: str,
    offset: list[float],
) -> None:
    session = _create(client, robot=robot)
    try:
        assert task in session["tasks"] and "posture" in session["tasks"]
        _drag(client, server, session, task, site, offset)
    finally:
        client.delete(f"/api/sessions/{session['id']}")


def _rich_stack(client: httpx.Client, sid: str) -> None:
    """Every task and limit type the arm can take, so the spec round trip covers them."""
    tasks = [
        {
            "name": "camera",
            "type": "look_at",
            "params": {"frame": "wrist_cam", "axis": [0, 0, -1], "cost": 0.05},
            "target": {"position": [0.8, 0.2, 0.0]},
        },
        {
            "name": "tool_down",
            "type": "axis_align",
            "enabled": False,
            "params": {"frame": "ee", "cost": 0.1},
            "target": {"direction": [0, 0, -1]},
        },
        {
            "name": "hand_in_link3",
            "type": "relative_frame",
            "params": {
                "frame": "hand",
                "frame_type": "body",
                "root": "link3",
                "position_cost": 0.01,
                "orientation_cost": 0.0,
            },
        },
        {"name": "com", "type": "com", "params": {"cost": [0.0, 0.0, 0.01]}},
        {"name": "damping", "type": "damping", "params": {"cost": {"joint1": 0.01}}},
        {"name": "energy", "type": "kinetic_energy", "params": {"cost": 1e-6}},
        {"name": "freeze_7", "type": "dof_freezing", "params": {"joints": ["joint7"]}},
    ]
    for task in tasks:
        response = client.post(f"/api/sessions/{sid}/tasks", json=task)
        assert response.status_code == 201, response.text
    limits = [
        {"type": "velocity", "params": {"velocities": {"joint1": 3.0, "joint2": 3.0}}},
        {
            "name": "floor",
            "type": "collision_avoidance",
            "params": {"geom_pairs": [[["hand", "left_finger", "right_finger"], ["floor"]]]},
        },
    ]
    for limit in limits:
        response = client.post(f"/api/sessions/{sid}/limits", json=limit)
        assert response.status_code == 201, response.text


def test_spec_export_and_restore_give_identical_state(client: httpx.Client) -> None:
    original = _create(client, robot="arm7", solver={"rate_hz": 100})
    sid = original["id"]
    try:
        _rich_stack(client, sid)
        target = client.get(f"/api/sessions/{sid}/tasks/ee").json()["target"]
        client.patch(
            f"/api/sessions/{sid}/tasks/ee",
            json={"target": {"position": np.add(target["position"], [0, 0.1, 0]).tolist()}},
        )
        state = _wait_state(client, sid, revision=_revision(client, sid))
        spec = client.get(f"/api/sessions/{sid}/spec").json()
        assert spec["q"] == state["q"]
        assert [t["name"] for t in spec["tasks"]] == [
            "ee",
            "posture",
            "camera",
            "tool_down",
            "hand_in_link3",
            "com",
            "damping",
            "energy",
            "freeze_7",
        ]
        assert [lim["name"] for lim in spec["limits"]] == ["configuration", "velocity", "floor"]

        restored = _create(client, spec=spec)
        try:
            restored_state = _wait_state(client, restored["id"])
            assert client.get(f"/api/sessions/{restored['id']}/spec").json() == spec
            assert restored_state["q"] == state["q"]
            assert restored_state["errors"] == state["errors"]
        finally:
            client.delete(f"/api/sessions/{restored['id']}")
    finally:
        client.delete(f"/api/sessions/{sid}")


def test_put_spec_replaces_a_live_session(client: httpx.Client, arm: str) -> None:
    other = _create(client, robot="arm7", keyframe="home", preset=False)
    try:
        spec = client.get(f"/api/sessions/{other['id']}/spec").json()
        response = client.put(f"/api/sessions/{arm}/spec", json=spec)
        assert response.status_code == 200, response.text
        assert client.get(f"/api/sessions/{arm}").json()["tasks"] == []
        humanoid = {**spec, "robot": "humanoid"}
        response = client.put(f"/api/sessions/{arm}/spec", json=humanoid)
        assert response.status_code == 409 and "humanoid" in response.json()["detail"]
    finally:
        client.delete(f"/api/sessions/{other['id']}")


@needs_menagerie
def test_g1_spec_round_trip(client: httpx.Client) -> None:
    session = _create(client, robot="unitree_g1", solver={"paused": True})
    try:
        client.post(
            f"/api/sessions/{session['id']}/limits",
            json={
                "type": "free_joint_velocity",
                "params": {"max_linear_velocity": 1.0, "max_angular_velocity": 2.0},
            },
        )
        spec = client.get(f"/api/sessions/{session['id']}/spec").json()
        restored = _create(client, spec=spec)
        assert client.get(f"/api/sessions/{restored['id']}/spec").json() == spec
        client.delete(f"/api/sessions/{restored['id']}")
    finally:
        client.delete(f"/api/sessions/{session['id']}")


def test_set_q_and_keyframe(client: httpx.Client, arm: str) -> None:
    client.patch(f"/api/sessions/{arm}/solver", json={"paused": True})
    q = [0.1, 0.2, 0.3, -1.0, 0.1, 1.0, 0.2]
    response = client.put(f"/api/sessions/{arm}/q", json={"q": q})
    assert response.status_code == 200 and response.json()["q"] == q
    state = _wait_state(client, arm, status="paused", revision=_revision(client, arm))
    assert state["q"] == q
    response = client.put(f"/api/sessions/{arm}/q", json={"keyframe": "home"})
    assert response.json()["q"] == pytest.approx([0, 0.444, 0, -1.256, 0, 1.44, 0])


def test_set_q_normalises_quaternions(client: httpx.Client) -> None:
    session = _create(client, robot="humanoid", solver={"paused": True})
    try:
        q = client.get(f"/api/sessions/{session['id']}/state").json()["q"]
        q[3:7] = [2.0, 0.0, 0.0, 0.0]
        response = client.put(f"/api/sessions/{session['id']}/q", json={"q": q})
        assert response.status_code == 200
        assert response.json()["q"][3:7] == [1.0, 0.0, 0.0, 0.0]
    finally:
        client.delete(f"/api/sessions/{session['id']}")


def test_solver_settings(client: httpx.Client, arm: str) -> None:
    response = client.patch(
        f"/api/sessions/{arm}/solver",
        json={"solver": "quadprog", "rate_hz": 120, "dt": 0.005, "damping": 1e-4},
    )
    assert response.status_code == 200, response.text
    assert response.json()["solver"] == "quadprog"
    assert client.get(f"/api/sessions/{arm}/solver").json()["dt"] == 0.005
    target = client.get(f"/api/sessions/{arm}/tasks/ee").json()["target"]
    client.patch(
        f"/api/sessions/{arm}/tasks/ee",
        json={"target": {"position": np.add(target["position"], [0, 0.05, 0]).tolist()}},
    )
    assert (
        _wait_state(client, arm, revision=_revision(client, arm))["errors"]["ee"] < 1e-3
    )  # quadprog solved it
    reset = client.patch(f"/api/sessions/{arm}/solver", json={"dt": None})
    assert reset.json()["dt"] is None and reset.json()["rate_hz"] == 120
    paused = client.patch(f"/api/sessions/{arm}/solver", json={"paused": True})
    assert paused.json()["paused"] is True
    assert _wait_state(client, arm, status="paused")["status"] == "paused"


def test_health_and_openapi(client: httpx.Client) -> None:
    health = client.get("/api/health").json()
    assert health["status"] == "ok" and "daqp" in health["solvers"]
    assert client.get("/docs").status_code == 200
    schema = client.get("/openapi.json").json()
    components = schema["components"]["schemas"]
    assert {"NewSession", "RestoreSession", "SessionSpec", "FrameTaskSpec"} <= set(components)
    for name, component in components.items():
        assert component.get("description"), name
        assert component.get("examples"), name
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            assert operation.get("summary"), (method, path)


def test_the_state_message_schema_has_the_fields_of_a_state() -> None:
    """The fields of a state are defined once (``SessionState``); the documented
    ``StateMessage`` must list exactly them, in order, after ``type``."""
    from posekit.api.protocol import StateMessage
    from posekit.sessions.live.state import STATE_FIELDS

    assert tuple(StateMessage.model_fields) == ("type", *STATE_FIELDS)


def test_metrics_report_the_rate_sessions_get(client: httpx.Client, arm: str) -> None:
    client.patch(f"/api/sessions/{arm}/solver", json={"rate_hz": 50, "tolerance": 1e-9})
    client.put(f"/api/sessions/{arm}/q", json={"q": [0.3, 0.2, 0.1, -1.0, 0.2, 1.0, 0.1]})

    def rate() -> float | None:
        lines = client.get("/api/metrics").text.splitlines()
        value = next(float(v.split()[1]) for v in lines if v.startswith("posekit_session_rate_hz "))
        return value if value > 0 else None

    wait_for(lambda: rate() == 50.0, what="the running session's rate, 50 Hz")
    assert client.get(f"/api/sessions/{arm}/state").json()["rate_hz"] == 50.0
