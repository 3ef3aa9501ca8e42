"""The websocket stream against a live server: dragging, reweighting, watchers, cleanup."""

from __future__ import annotations

import json
import time

import httpx
import mujoco
import numpy as np
import pytest
from support.servers import LiveServer
from support.streams import (
    next_message,
    open_stream,
    quat_to_matrix,
    recv,
    rotation_angle,
    site_pose,
)
from support.waiting import wait_for

MM = 1e-3
DEGREE = np.pi / 180.0


def _ee_target(client: httpx.Client, session_id: str) -> dict:
    return client.get(f"/api/sessions/{session_id}/tasks/ee").json()["target"]


def _rotated_about_z(wxyz: list[float], angle: float) -> list[float]:
    turn = np.array([np.cos(angle / 2), 0.0, 0.0, np.sin(angle / 2)])
    out = np.zeros(4)
    mujoco.mju_mulQuat(out, turn, np.asarray(wxyz, dtype=float))
    return out.tolist()


def test_hello_comes_first_and_describes_the_session(server: LiveServer, arm: str) -> None:
    with open_stream(server, arm) as ws:
        hello = recv(ws)
    assert hello["type"] == "hello"
    assert hello["session"]["id"] == arm
    assert [t["name"] for t in hello["tasks"]] == ["ee", "posture"]
    assert [lim["name"] for lim in hello["limits"]] == ["configuration"]
    assert len(hello["state"]["q"]) == 7
    assert hello["solver"]["solver"] == "daqp"


def test_dragged_target_converges_within_1mm_and_1deg(
    server: LiveServer, client: httpx.Client, arm: str
) -> None:
    start = _ee_target(client, arm)
    goal_position = np.add(start["position"], [-0.08, 0.15, -0.1])
    goal_wxyz = _rotated_about_z(start["wxyz"], 0.5)
    with open_stream(server, arm) as ws:
        assert recv(ws)["type"] == "hello"
        for i, s in enumerate(np.linspace(0.1, 1.0, 10)):  # a drag: ten intermediate poses
            position = (1 - s) * np.array(start["position"]) + s * goal_position
            message = {"type": "target", "task": "ee", "position": position.tolist(), "ref": i}
            if i == 9:
                message["wxyz"] = goal_wxyz
            ws.send(json.dumps(message))
            time.sleep(0.02)
        state = next_message(
            ws,
            lambda m: m["type"] == "state" and m["ref"] == 9 and m["status"] == "converged",
            what="converged state after the last target",
        )
    model = server.manager.registry.model("arm7")
    position, rotation = site_pose(model, state["q"], "ee")
    assert np.linalg.norm(position - goal_position) < 1 * MM
    assert rotation_angle(rotation, quat_to_matrix(goal_wxyz)) < 1 * DEGREE
    assert state["errors"]["ee"] < 1e-3


def test_a_burst_of_targets_lands_on_the_last_one_in_order(
    server: LiveServer, client: httpx.Client, arm: str
) -> None:
    """50 targets sent back to back, faster than the session steps: latest wins (the
    session settles on the last one), and the ``ref`` of the states never goes back."""
    start = np.array(_ee_target(client, arm)["position"])
    refs = []
    with open_stream(server, arm) as ws:
        assert recv(ws)["type"] == "hello"
        for i in range(1, 51):
            position = start + np.array([0.0, 0.002 * i, 0.0])
            ws.send(
                json.dumps(
                    {"type": "target", "task": "ee", "position": position.tolist(), "ref": i}
                )
            )

        def settled(message: dict) -> bool:
            if message["type"] == "state" and message["ref"] is not None:
                refs.append(message["ref"])
            return message["type"] == "state" and message["ref"] == 50 and message["converged"]

        state = next_message(ws, settled, what="the last target's converged state")
    assert refs == sorted(refs), refs
    position, _ = site_pose(server.manager.registry.model("arm7"), state["q"], "ee")
    goal = start + np.array([0.0, 0.1, 0.0])
    assert np.linalg.norm(position - goal) < 1 * MM
    assert _ee_target(client, arm)["position"] == pytest.approx(goal.tolist())


def test_live_reweighting_changes_the_solution(
    server: LiveServer, client: httpx.Client, arm: str
) -> None:
    start = _ee_target(client, arm)
    goal = (np.add(start["position"], [0.0, 0.2, 0.0])).tolist()
    model = server.manager.registry.model("arm7")
    with open_stream(server, arm) as ws:
        recv(ws)
        response = client.patch(
            f"/api/sessions/{arm}/tasks/ee", json={"position_cost": 0.0, "orientation_cost": 0.0}
        )
        assert response.status_code == 200, response.text
        tasks = next_message(ws, lambda m: m["type"] == "tasks", what="tasks message")
        ee = next(t for t in tasks["tasks"] if t["name"] == "ee")
        assert ee["params"]["position_cost"] == 0.0
        ws.send(json.dumps({"type": "target", "task": "ee", "position": goal, "ref": "far"}))
        state = next_message(
            ws, lambda m: m["type"] == "state" and m["ref"] == "far" and m["converged"]
        )
        ignored, _ = site_pose(model, state["q"], "ee")
        assert np.linalg.norm(ignored - goal) > 0.15  # weightless: the posture wins

        client.patch(f"/api/sessions/{arm}/tasks/ee", json={"position_cost": [1, 1, 1]})
        ws.send(json.dumps({"type": "target", "task": "ee", "position": goal, "ref": "again"}))
        state = next_message(
            ws, lambda m: m["type"] == "state" and m["ref"] == "again" and m["converged"]
        )
        reached, _ = site_pose(model, state["q"], "ee")
        assert np.linalg.norm(reached - goal) < 1 * MM


def test_tasks_added_and_removed_while_streaming(
    server: LiveServer, client: httpx.Client, arm: str
) -> None:
    start = _ee_target(client, arm)
    with open_stream(server, arm) as ws:
        recv(ws)
        ws.send(
            json.dumps(
                {
                    "type": "target",
                    "task": "ee",
                    "position": (np.add(start["position"], [0, 0.1, 0])).tolist(),
                }
            )
        )
        look = {
            "name": "camera",
            "type": "look_at",
            "params": {"frame": "wrist_cam", "frame_type": "site", "axis": [0, 0, -1], "cost": 0.1},
            "target": {"position": [0.7, 0.3, 0.0]},
        }
        response = client.post(f"/api/sessions/{arm}/tasks", json=look)
        assert response.status_code == 201, response.text
        tasks = next_message(ws, lambda m: m["type"] == "tasks", what="tasks message after add")
        assert [t["name"] for t in tasks["tasks"]] == ["ee", "posture", "camera"]
        state = next_message(ws, lambda m: m["type"] == "state" and "camera" in m["errors"])
        assert isinstance(state["errors"]["camera"], float)

        assert client.delete(f"/api/sessions/{arm}/tasks/camera").status_code == 204
        tasks = next_message(ws, lambda m: m["type"] == "tasks", what="tasks message after delete")
        assert [t["name"] for t in tasks["tasks"]] == ["ee", "posture"]
        ws.send(
            json.dumps(
                {"type": "target", "task": "ee", "position": start["position"], "ref": "back"}
            )
        )
        state = next_message(ws, lambda m: m["type"] == "state" and m["ref"] == "back")
        assert set(state["errors"]) == {"ee", "posture"}


def test_two_watchers_stay_in_sync(server: LiveServer, client: httpx.Client, arm: str) -> None:
    start = _ee_target(client, arm)
    with open_stream(server, arm) as first, open_stream(server, arm) as second:
        recv(first)
        recv(second)
        assert client.get(f"/api/sessions/{arm}").json()["watchers"] == 2
        goal = (np.add(start["position"], [0.05, -0.1, 0.05])).tolist()
        first.send(json.dumps({"type": "target", "task": "ee", "position": goal, "ref": "a1"}))

        def done(m: dict) -> bool:
            return m["type"] == "state" and m["ref"] == "a1" and m["converged"]

        a = next_message(first, done)
        b = next_message(second, done)
        assert (a["seq"], a["q"]) == (b["seq"], b["q"])

        client.patch(f"/api/sessions/{arm}/tasks/posture", json={"cost": 0.05})
        ta = next_message(first, lambda m: m["type"] == "tasks")
        tb = next_message(second, lambda m: m["type"] == "tasks")
        assert ta == tb
        assert ta["tasks"][1]["params"]["cost"] == 0.05


def _watchers(client: httpx.Client, session_id: str) -> int:
    return client.get(f"/api/sessions/{session_id}").json()["watchers"]


def test_disconnects_mid_stream_are_cleaned_up(
    server: LiveServer, client: httpx.Client, arm: str
) -> None:
    start = np.array(_ee_target(client, arm)["position"])
    driver = open_stream(server, arm)
    polite = open_stream(server, arm)
    rude = open_stream(server, arm)
    for ws in (driver, polite, rude):
        recv(ws)
    assert _watchers(client, arm) == 3
    for i in range(20):  # keep the session streaming while clients leave
        offset = 0.05 * np.sin(i / 3)
        driver.send(
            json.dumps(
                {"type": "target", "task": "ee", "position": np.add(start, [0, offset, 0]).tolist()}
            )
        )
        if i == 5:
            polite.close()
        if i == 10:
            rude.socket.close()  # no close frame: the TCP connection just drops
        time.sleep(0.02)
    wait_for(lambda: _watchers(client, arm) == 1)
    next_message(driver, lambda m: m["type"] == "state")  # the remaining watcher still streams
    driver.close()
    wait_for(lambda: _watchers(client, arm) == 0)
    assert client.get("/api/health").status_code == 200


def test_a_slow_watcher_costs_bounded_memory(
    server: LiveServer, client: httpx.Client, arm: str
) -> None:
    start = np.array(_ee_target(client, arm)["position"])
    slow = open_stream(server, arm)  # never reads
    session = server.manager.get(arm)
    peak = 0
    try:
        with open_stream(server, arm) as driver:
            recv(driver)
            for i in range(60):
                driver.send(
                    json.dumps(
                        {
                            "type": "target",
                            "task": "ee",
                            "position": np.add(start, [0, 0.1 * np.sin(i / 5), 0]).tolist(),
                        }
                    )
                )
                if i % 10 == 0:  # reweighting too: tasks messages pile up for the slow one
                    client.patch(
                        f"/api/sessions/{arm}/tasks/posture", json={"cost": 0.01 + i * 1e-4}
                    )
                peak = max(peak, session.backlog())
                time.sleep(0.01)
    finally:
        slow.close()
    assert peak <= 2 + 16  # one state, one tasks snapshot, at most 16 queued messages


def test_bad_websocket_messages_get_errors_and_change_nothing(
    server: LiveServer, client: httpx.Client, arm: str
) -> None:

    client.patch(f"/api/sessions/{arm}/solver", json={"paused": True})
    before = client.get(f"/api/sessions/{arm}/spec").json()
    bad = [
        ("{not json", "invalid", None),
        ("[1, 2, 3]", "invalid", None),
        (json.dumps({"type": "teleport", "ref": 1}), "invalid", 1),
        (
            json.dumps({"type": "target", "task": "nope", "position": [0, 0, 0], "ref": 2}),
            "not_found",
            2,
        ),
        (json.dumps({"type": "target", "task": "ee", "position": [0, 0], "ref": 3}), "invalid", 3),
        ('{"type": "target", "task": "ee", "position": [NaN, 0, 0], "ref": 4}', "invalid", 4),
        (
            json.dumps({"type": "target", "task": "ee", "direction": [0, 0, 1], "ref": 5}),
            "mismatch",
            5,
        ),
        (
            json.dumps({"type": "target", "task": "ee", "wxyz": [0, 0, 0, 0], "ref": 6}),
            "mismatch",
            6,
        ),
        (
            json.dumps({"type": "target", "task": "posture", "q": [0.0] * 6, "ref": 7}),
            "mismatch",
            7,
        ),
        (
            json.dumps(
                {"type": "target", "task": "ee", "position": [0, 0, 0], "extra": 1, "ref": 8}
            ),
            "invalid",
            8,
        ),
        (
            json.dumps(
                {
                    "type": "target",
                    "task": "ee",
                    "position": [0.0] * 3,
                    "ref": "x" * 100,
                    "pad": "y" * 70_000,
                }
            ),
            "too_large",
            None,
        ),
    ]
    with open_stream(server, arm) as ws:
        recv(ws)
        for raw, code, ref in bad:
            ws.send(raw)
            error = next_message(ws, lambda m: m["type"] == "error", what=f"error for {raw[:40]}")
            assert error["code"] == code, (raw[:60], error)
            assert error["ref"] == ref
            assert error["message"]
        ws.send(json.dumps({"type": "ping", "ref": "still-open"}))
        assert next_message(ws, lambda m: m["type"] == "pong")["ref"] == "still-open"
    assert client.get(f"/api/sessions/{arm}/spec").json() == before


def test_deleting_a_session_closes_its_streams(server: LiveServer, client: httpx.Client) -> None:
    session_id = client.post("/api/sessions", json={"robot": "arm7"}).json()["id"]
    with open_stream(server, session_id) as ws:
        recv(ws)
        assert client.delete(f"/api/sessions/{session_id}").status_code == 204
        error = next_message(ws, lambda m: m["type"] == "error")
        assert error["code"] == "session_closed"
        with pytest.raises(Exception):  # noqa: B017 - the server closes with 4410
            next_message(ws, lambda m: False, timeout=5.0)
        assert ws.close_code == 4410


def test_stream_of_an_unknown_session_is_refused(server: LiveServer) -> None:
    with open_stream(server, "no-such-session") as ws:
        error = recv(ws)
        assert error["type"] == "error" and error["code"] == "not_found"
        assert "no-such-session" in error["message"]
        with pytest.raises(Exception):  # noqa: B017 - closed with 4404
            recv(ws)
        assert ws.close_code == 4404
