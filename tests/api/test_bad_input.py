"""Every class of bad input gets a 4xx naming the problem, and leaves the session as it was."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from support.models import needs_menagerie

S = "/api/sessions/{sid}"
FRAME = {"type": "frame", "params": {"frame": "ee"}}

# (name, method, path, json body or raw bytes, status, fragments the message must contain).
# 422: the body breaks the OpenAPI schema; 409: it follows the schema but does not fit
# the session (its robot's names and sizes, its task's type).
CASES: list[tuple[str, str, str, Any, int, tuple[str, ...]]] = [
    ("unknown robot", "POST", "/api/sessions", {"robot": "ur5"}, 404, ("'ur5'",)),
    # Near misses: the message says what was probably meant.
    (
        "robot by its short name",
        "POST",
        "/api/sessions",
        {"robot": "ur5e"},
        404,
        ("did you mean 'universal_robots_ur5e'?",),
    ),
    (
        "misspelt field",
        "POST",
        S + "/tasks",
        {"type": "frame", "params": {"frame": "ee", "positon_cost": 1}},
        422,
        ("positon_cost", "did you mean 'position_cost'?"),
    ),
    (
        "misspelt task type",
        "POST",
        S + "/tasks",
        {"type": "fram", "params": {"frame": "ee"}},
        422,
        ("did you mean 'frame'?",),
    ),
    (
        "misspelt frame",
        "POST",
        S + "/tasks",
        {"type": "frame", "params": {"frame": "wrist_camera"}},
        409,
        ("'wrist_camera' does not exist", "Did you mean 'wrist_cam'?"),
    ),
    (
        "misspelt task name",
        "PATCH",
        S + "/tasks/postur",
        {"cost": 1},
        404,
        ("Did you mean 'posture'?",),
    ),
    ("misspelt keyframe", "PUT", S + "/q", {"keyframe": "hom"}, 409, ("Did you mean 'home'?",)),
    (
        "unknown keyframe",
        "POST",
        "/api/sessions",
        {"robot": "arm7", "keyframe": "sit"},
        409,
        ("Keyframe sit does not exist", "'home'"),
    ),
    (
        "spec and robot",
        "POST",
        "/api/sessions",
        {"robot": "arm7", "spec": {"robot": "arm7", "q": [0] * 7}},
        422,
        ("robot",),
    ),
    (
        "spec q size",
        "POST",
        "/api/sessions",
        {"spec": {"robot": "arm7", "q": [0] * 6}},
        409,
        ("shape (7,)",),
    ),
    ("unknown session", "GET", "/api/sessions/nope", None, 404, ("'nope'",)),
    (
        "unknown session task",
        "PATCH",
        "/api/sessions/nope/tasks/ee",
        {"gain": 0.5},
        404,
        ("'nope'",),
    ),
    ("unknown task", "PATCH", S + "/tasks/hand", {"gain": 0.5}, 404, ("'hand'", "'ee'")),
    ("unknown task delete", "DELETE", S + "/tasks/hand", None, 404, ("'hand'",)),
    (
        "unknown limit",
        "PATCH",
        S + "/limits/speed",
        {"enabled": False},
        404,
        ("'speed'", "'configuration'"),
    ),
    (
        "unknown frame",
        "POST",
        S + "/tasks",
        {"type": "frame", "params": {"frame": "tcp"}},
        409,
        ("'tcp'", "'ee'"),
    ),
    (
        "unknown frame type",
        "POST",
        S + "/tasks",
        {"type": "frame", "params": {"frame": "ee", "frame_type": "joint"}},
        422,
        ("frame_type",),
    ),
    (
        "unknown joint (freeze)",
        "POST",
        S + "/tasks",
        {"type": "dof_freezing", "params": {"joints": ["elbow"]}},
        409,
        ("'elbow'", "'joint1'"),
    ),
    (
        "unknown joint (posture cost)",
        "PATCH",
        S + "/tasks/posture",
        {"cost": {"elbow": 1.0}},
        409,
        ("'elbow'",),
    ),
    (
        "unknown joint (velocity)",
        "POST",
        S + "/limits",
        {"type": "velocity", "params": {"velocities": {"elbow": 1.0}}},
        409,
        ("'elbow'",),
    ),
    (
        "free joint limit on a fixed base",
        "POST",
        S + "/limits",
        {"type": "free_joint_velocity", "params": {"max_linear_velocity": 1.0}},
        409,
        ("free joint",),
    ),
    (
        "unknown geom",
        "POST",
        S + "/limits",
        {"type": "collision_avoidance", "params": {"geom_pairs": [[["gripper"], ["floor"]]]}},
        409,
        ("'gripper'", "geom"),
    ),
    ("no equalities", "POST", S + "/tasks", {"type": "equality"}, 409, ("equality",)),
    (
        "target vector size",
        "PATCH",
        S + "/tasks/ee",
        {"target": {"position": [0.1, 0.2]}},
        422,
        ("target.position",),
    ),
    (
        "quaternion size",
        "PATCH",
        S + "/tasks/ee",
        {"target": {"wxyz": [1, 0, 0]}},
        422,
        ("target.wxyz",),
    ),
    (
        "zero quaternion",
        "PATCH",
        S + "/tasks/ee",
        {"target": {"wxyz": [0, 0, 0, 0]}},
        409,
        ("wxyz",),
    ),
    (
        "posture target size",
        "PATCH",
        S + "/tasks/posture",
        {"target": {"q": [0.0] * 3}},
        409,
        ("nq=7",),
    ),
    ("q size", "PUT", S + "/q", {"q": [0.0] * 6}, 409, ("shape (7,)",)),
    (
        "q and keyframe",
        "PUT",
        S + "/q",
        {"q": [0.0] * 7, "keyframe": "home"},
        422,
        ("exactly one",),
    ),
    (
        "cost vector size",
        "PATCH",
        S + "/tasks/ee",
        {"position_cost": [1.0, 1.0]},
        422,
        ("position_cost",),
    ),
    ("NaN", "PATCH", S + "/tasks/ee", b'{"target": {"position": [NaN, 0, 0]}}', 422, ("finite",)),
    ("Infinity", "PATCH", S + "/tasks/ee", b'{"gain": Infinity}', 422, ("gain",)),
    ("overflow to inf", "PUT", S + "/q", b'{"q": [1e400, 0, 0, 0, 0, 0, 0]}', 422, ("finite",)),
    (
        "negative cost",
        "PATCH",
        S + "/tasks/ee",
        {"position_cost": -1.0},
        422,
        ("position_cost", "greater than or equal to 0"),
    ),
    (
        "negative joint cost",
        "PATCH",
        S + "/tasks/posture",
        {"cost": {"joint1": -0.5}},
        422,
        ("cost",),
    ),
    ("gain above 1", "PATCH", S + "/tasks/ee", {"gain": 1.5}, 422, ("gain", "1")),
    ("cost too large", "PATCH", S + "/tasks/ee", {"position_cost": 1e300}, 422, ("1000000",)),
    ("lm_damping too large", "PATCH", S + "/tasks/ee", {"lm_damping": 1e9}, 422, ("lm_damping",)),
    ("solver damping too large", "PATCH", S + "/solver", {"damping": 1e300}, 422, ("damping",)),
    ("dt too small", "PATCH", S + "/solver", {"dt": 1e-300}, 422, ("dt", "0.00001")),
    (
        "target beyond 10 km",
        "PATCH",
        S + "/tasks/ee",
        {"target": {"position": [1e200, 0.0, 0.0]}},
        422,
        ("target.position.0", "10000"),
    ),
    ("q beyond 1e4", "PUT", S + "/q", {"q": [1e6] * 7}, 422, ("q.0", "10000")),
    ("gain as a boolean", "PATCH", S + "/tasks/ee", {"gain": True}, 422, ("gain", "number")),
    ("cost as a string", "PATCH", S + "/tasks/ee", {"position_cost": "1"}, 422, ("number",)),
    ("rate as a string", "PATCH", S + "/solver", {"rate_hz": "60"}, 422, ("rate_hz",)),
    (
        "gain below 0",
        "POST",
        S + "/tasks",
        {"type": "com", "params": {"gain": -0.1}},
        422,
        ("gain",),
    ),
    ("limit gain 0", "PATCH", S + "/limits/configuration", {"gain": 0.0}, 422, ("gain",)),
    (
        "unknown task type",
        "POST",
        S + "/tasks",
        {"type": "teleport", "params": {}},
        422,
        ("teleport", "frame", "posture"),
    ),
    ("unknown limit type", "POST", S + "/limits", {"type": "fence"}, 422, ("fence",)),
    ("unknown field", "PATCH", S + "/tasks/ee", {"frobnicate": 1}, 422, ("frobnicate",)),
    (
        "field of another type",
        "PATCH",
        S + "/tasks/posture",
        {"position_cost": 1.0},
        409,
        ("position_cost", "'posture'"),
    ),
    (
        "unknown limit param",
        "PATCH",
        S + "/limits/configuration",
        {"velocities": {}},
        409,
        ("velocities", "gain"),
    ),
    (
        "target on a targetless task",
        "POST",
        S + "/tasks",
        {"type": "damping", "target": {"position": [0, 0, 0]}},
        422,
        ("target",),
    ),
    (
        "wrong target kind",
        "PATCH",
        S + "/tasks/ee",
        {"target": {"direction": [0, 0, 1]}},
        409,
        ("direction", "position"),
    ),
    (
        "kinetic energy as constraint",
        "POST",
        S + "/tasks",
        {"type": "kinetic_energy", "role": "constraint"},
        422,
        ("role",),
    ),
    ("bad name", "POST", S + "/tasks", {**FRAME, "name": "a/b"}, 422, ("name",)),
    ("name taken", "POST", S + "/tasks", {**FRAME, "name": "ee"}, 409, ("'ee'",)),
    (
        "limit name taken",
        "POST",
        S + "/limits",
        {"type": "configuration", "name": "configuration"},
        409,
        ("'configuration'",),
    ),
    ("unknown solver", "PATCH", S + "/solver", {"solver": "cplex"}, 422, ("cplex", "daqp")),
    ("rate out of range", "PATCH", S + "/solver", {"rate_hz": 0}, 422, ("rate_hz",)),
    ("unknown keyframe (q)", "PUT", S + "/q", {"keyframe": "sit"}, 409, ("Keyframe sit", "'home'")),
    ("malformed JSON", "PATCH", S + "/tasks/ee", b'{"gain": ', 422, ("not valid JSON",)),
    ("JSON of the wrong shape", "PATCH", S + "/tasks/ee", b"[1, 2]", 422, ("object",)),
    (
        "oversized body",
        "POST",
        S + "/tasks",
        b'{"pad": "' + b"x" * (2 << 20) + b'"}',
        413,
        ("exceeds",),
    ),
]


def _send(client: httpx.Client, method: str, path: str, body: Any) -> httpx.Response:
    if isinstance(body, bytes):
        return client.request(
            method, path, content=body, headers={"content-type": "application/json"}
        )
    return client.request(method, path, json=body)


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "fragments"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_bad_input_is_4xx_and_changes_nothing(
    client: httpx.Client,
    arm: str,
    method: str,
    path: str,
    body: Any,
    status: int,
    fragments: tuple[str, ...],
) -> None:
    client.patch(f"/api/sessions/{arm}/solver", json={"paused": True})
    before = client.get(f"/api/sessions/{arm}").json()
    spec = client.get(f"/api/sessions/{arm}/spec").json()
    sessions = {s["id"] for s in client.get("/api/sessions").json()}

    response = _send(client, method, path.format(sid=arm), body)

    assert response.status_code == status, response.text
    error = response.json()
    assert error["code"] and error["detail"]
    for fragment in fragments:
        assert fragment in error["detail"], (fragment, error["detail"])
    assert client.get(f"/api/sessions/{arm}/spec").json() == spec
    assert client.get(f"/api/sessions/{arm}").json()["revision"] == before["revision"]
    assert {s["id"] for s in client.get("/api/sessions").json()} == sessions


def test_one_mistake_is_one_entry(client: httpx.Client, arm: str) -> None:
    """A misspelt field of a PATCH is checked against every task type's body: it is still
    one mistake, reported once."""
    response = client.patch(f"/api/sessions/{arm}/tasks/ee", json={"orientaton_cost": 1})
    assert response.status_code == 422
    assert response.json()["errors"] == [
        {
            "loc": "orientaton_cost",
            "type": "extra_forbidden",
            "msg": "Extra inputs are not permitted",
        }
    ]
    assert "did you mean 'orientation_cost'?" in response.json()["detail"]


def test_a_chunked_oversized_body_is_413(client: httpx.Client, arm: str) -> None:
    def chunks():
        for _ in range(40):
            yield b"x" * 65536

    response = client.post(
        f"/api/sessions/{arm}/tasks", content=chunks(), headers={"content-type": "application/json"}
    )
    assert response.status_code == 413


@needs_menagerie
def test_unknown_equality_on_aloha(client: httpx.Client) -> None:
    session = client.post("/api/sessions", json={"robot": "aloha", "preset": False}).json()
    try:
        base = f"/api/sessions/{session['id']}/tasks"
        response = client.post(base, json={"type": "equality", "params": {"equalities": ["#7"]}})
        assert response.status_code == 409
        assert "'#7'" in response.json()["detail"] and "'#0'" in response.json()["detail"]
        response = client.post(base, json={"type": "equality", "params": {"equalities": ["grip"]}})
        assert response.status_code == 409 and "'grip'" in response.json()["detail"]
        ok = client.post(base, json={"type": "equality", "params": {"equalities": ["#0", "#1"]}})
        assert ok.status_code == 201, ok.text
    finally:
        client.delete(f"/api/sessions/{session['id']}")


def test_no_input_in_a_fuzzed_batch_gives_a_500(client: httpx.Client, arm: str) -> None:
    """Odd values in every slot of a task spec: never a server error."""
    odd_values = [None, "", "x", -1, 0, 1e308, [], {}, [None], {"a": 1}, True, "NaN"]
    slots = ["name", "type", "role", "enabled", "params", "target"]
    for slot in slots:
        for value in odd_values:
            body = {**FRAME, "params": {"frame": "ee"}, "name": "fuzz", slot: value}
            response = client.post(f"/api/sessions/{arm}/tasks", json=body)
            assert response.status_code < 500, (slot, value, response.text)
            if response.status_code == 201:
                client.delete(f"/api/sessions/{arm}/tasks/fuzz")
    for value in odd_values:
        for field in ("position_cost", "cost", "gain", "axis", "target", "enabled", "role"):
            response = client.patch(f"/api/sessions/{arm}/tasks/ee", json={field: value})
            assert response.status_code < 500, (field, value, response.text)
        response = client.put(f"/api/sessions/{arm}/q", content=json.dumps({"q": value}))
        assert response.status_code < 500, (value, response.text)


@pytest.mark.parametrize(
    "body",
    [b"\xff\xfe", b"[" * 3000 + b"]" * 3000, b'{"robot": ' + b"9" * 5000 + b"}", b"{nope"],
    ids=["invalid-utf8", "nested-too-deep", "5000-digit-integer", "broken-json"],
)
def test_every_malformed_body_is_a_422(client: httpx.Client, arm: str, body: bytes) -> None:
    before = client.get(f"/api/sessions/{arm}/spec").json()
    for method, path in (("POST", "/api/sessions"), ("PATCH", f"/api/sessions/{arm}/tasks/ee")):
        response = client.request(
            method, path, content=body, headers={"content-type": "application/json"}
        )
        assert response.status_code == 422, response.text
        assert response.json()["code"] == "invalid"
        assert "not valid JSON" in response.json()["detail"]
    assert client.get(f"/api/sessions/{arm}/spec").json()["tasks"] == before["tasks"]


def test_options_and_405_list_every_method_of_the_path(client: httpx.Client, arm: str) -> None:
    options = client.options(f"/api/sessions/{arm}/tasks/ee")
    assert options.status_code == 204
    assert options.headers["allow"] == "DELETE, GET, OPTIONS, PATCH"
    refused = client.put(f"/api/sessions/{arm}/tasks/ee", json={})
    assert refused.status_code == 405 and refused.json()["code"] == "method_not_allowed"
    assert refused.headers["allow"] == "DELETE, GET, OPTIONS, PATCH"
    assert client.options("/api/sessions").headers["allow"] == "GET, OPTIONS, POST"


def test_error_messages_show_no_server_paths() -> None:
    from posekit.api.errors import error_response

    response = error_response(
        503, "robot_unavailable", "ParseXML: Error opening file '/srv/cache/g1/g1_with_hands.xml'"
    )
    assert b"/srv" not in response.body and b"'g1_with_hands.xml'" in response.body
