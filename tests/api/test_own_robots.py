"""Robots from files over the API: a folder of MJCF + URDF
robots served and solved, live reload of an edited MJCF (sessions, mirrors, viewers),
uploads and deletes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import mujoco
import numpy as np
import pytest
from posekit.robots import RobotRegistry
from support.own_server import OwnServer, settled, start_own_server, stop_own_server
from support.robot_files import write_mjcf_arm, write_urdf_package, zip_folder
from support.streams import next_message, open_stream, recv
from support.waiting import wait_for

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnServer]:
    server = start_own_server(tmp_path_factory.mktemp("own"))
    yield server
    stop_own_server(server)


def frame_position(model: mujoco.MjModel, q: list[float], name: str, kind: str) -> np.ndarray:
    data = mujoco.MjData(model)
    data.qpos[:] = q
    mujoco.mj_kinematics(model, data)
    return (data.site(name) if kind == "site" else data.body(name)).xpos.copy()


# --------------------------------------------------------------- a folder of robots
def test_a_folder_serves_its_mjcf_and_urdf_robots_and_sessions_solve(own: OwnServer) -> None:
    listed = {
        r["name"]: r for r in own.client.get("/api/robots", params={"source": "local"}).json()
    }
    assert {"my_arm", "two_link"} <= set(listed)
    assert listed["my_arm"]["category"] == listed["two_link"]["category"] == "arm"
    urdf = own.client.get("/api/robots/two_link").json()
    assert "tool0" in urdf["frames"]["body"] and urdf["keyframes"] == ["home"]
    assert "end effector" in urdf["preset_reasons"]["tool0"]
    for robot, frame, kind in (("my_arm", "tool", "site"), ("two_link", "tool0", "body")):
        created = own.client.post("/api/sessions", json={"robot": robot})
        assert created.status_code == 201, created.text
        session = created.json()
        assert frame in session["tasks"] and "posture" in session["tasks"]
        drag_and_check(own, session["id"], robot, frame, kind)
        own.client.delete(f"/api/sessions/{session['id']}")


def drag_and_check(own: OwnServer, session_id: str, robot: str, frame: str, kind: str) -> None:
    """Move the frame task's target to a reachable point; the session reaches it."""
    model = RobotRegistry(menagerie=False, local=own.live.manager.registry.local_robots()).model(
        robot
    )
    start = settled(own.client, session_id)
    moved = np.asarray(start["q"]) + np.array([0.2, 0.15, 0.1])[: model.nq]  # reachable
    goal = frame_position(model, moved.tolist(), frame, kind)
    patched = own.client.patch(
        f"/api/sessions/{session_id}/tasks/{frame}",
        json={"target": {"position": goal.tolist()}, "orientation_cost": 0.0},
    )
    assert patched.status_code == 200, patched.text
    end = settled(own.client, session_id, patched_revision(own, session_id))
    assert np.linalg.norm(frame_position(model, end["q"], frame, kind) - goal) < 1e-3


def patched_revision(own: OwnServer, session_id: str) -> int:
    return int(own.client.get(f"/api/sessions/{session_id}").json()["revision"])


# ------------------------------------------------------------------- live reload
def body_glb(viewer: object, body: str) -> bytes:
    renderer = viewer.renderer  # type: ignore[attr-defined]
    handle = renderer.body_handles[renderer.model.body(body).id]
    return bytes(handle.glb_data)


def test_editing_an_mjcf_reloads_live_sessions_mirrors_and_viewers(own: OwnServer) -> None:
    path = write_mjcf_arm(own.robots, name="reload_arm")  # a new file: a new robot
    wait_for(
        lambda: own.client.get("/api/robots/reload_arm").status_code == 200,
        timeout=20,
        what="the new file listed",
    )
    session = own.client.post("/api/sessions", json={"robot": "reload_arm"}).json()
    sid = session["id"]
    aim = {
        "name": "aim",
        "type": "look_at",
        "params": {"frame": "tool", "cost": 0.01},
        "target": {"position": [0.6, 0.0, 0.0]},
    }
    assert own.client.post(f"/api/sessions/{sid}/tasks", json=aim).status_code == 201
    start = settled(own.client, sid)
    old_model = mujoco.MjModel.from_xml_path(str(path))
    moved = (np.asarray(start["q"]) + np.array([0.2, -0.15, 0.1])).tolist()
    goal = frame_position(old_model, moved, "tool", "site").tolist()
    own.client.patch(
        f"/api/sessions/{sid}/tasks/tool",
        json={"target": {"position": goal}, "orientation_cost": 0.0},
    )
    settled(own.client, sid, patched_revision(own, sid))
    viewer = own.live.app.state.viewer_hub.viewer(sid, "http://test/viewer")
    glb_before = body_glb(viewer, "link2")
    with open_stream(own.live, sid) as ws:
        assert recv(ws)["type"] == "hello"
        # A longer, thicker forearm (the goal stays within reach): the designer edits the file.
        path.write_text(
            path.read_text().replace("0.3 0 0", "0.33 0 0").replace('size="0.03"', 'size="0.05"')
        )
        report = next_message(ws, lambda m: m["type"] == "reload", timeout=30, what="reload")
        assert report["status"] == "reloaded" and report["dropped_tasks"] == []
        assert report["joints_kept"] == 3 and report["reset_targets"] == []
        tasks = next_message(ws, lambda m: m["type"] == "tasks", what="tasks after the reload")
        assert [t["name"] for t in tasks["tasks"]] == ["tool", "posture", "aim"]
    summary = own.client.get(f"/api/sessions/{sid}").json()
    assert summary["reload"]["status"] == "reloaded" and summary["tasks"] == [
        "tool",
        "posture",
        "aim",
    ]
    tool = own.client.get(f"/api/sessions/{sid}/tasks/tool").json()
    assert tool["target"]["position"] == pytest.approx(goal)  # the target was kept
    # Solved on the new model: the longer arm reaches the goal.
    state = settled(own.client, sid, report["revision"])
    new_model = mujoco.MjModel.from_xml_path(str(path))
    assert np.linalg.norm(frame_position(new_model, state["q"], "tool", "site") - goal) < 1e-3
    assert np.linalg.norm(frame_position(old_model, state["q"], "tool", "site") - goal) > 0.01
    # Every viewer shows the new geometry.
    wait_for(
        lambda: viewer.renderer.model is own.live.manager.get(sid).model,
        timeout=10,
        what="the viewer on the new model",
    )
    assert body_glb(viewer, "link2") != glb_before

    # A renamed site: the tasks on it are reported, the others kept.
    with open_stream(own.live, sid) as ws:
        recv(ws)
        path.write_text(path.read_text().replace('name="tool"', 'name="tcp"'))
        report = next_message(ws, lambda m: m["type"] == "reload", timeout=30, what="reload")
    assert sorted(d["name"] for d in report["dropped_tasks"]) == ["aim", "tool"]
    assert "site 'tool' does not exist" in report["dropped_tasks"][0]["reason"]
    assert own.client.get(f"/api/sessions/{sid}").json()["tasks"] == ["posture"]

    # Files that do not compile: reported, the session keeps its model and tasks.
    model = own.live.manager.get(sid).model
    with open_stream(own.live, sid) as ws:
        recv(ws)
        path.write_text(path.read_text().replace("<worldbody>", "<worldbody><bogus/>"))
        report = next_message(ws, lambda m: m["type"] == "reload", timeout=30, what="reload")
    assert report["status"] == "failed" and "reload_arm.xml" in report["error"]
    assert str(own.robots) not in report["error"]
    assert own.live.manager.get(sid).model is model
    own.client.delete(f"/api/sessions/{sid}")


# ------------------------------------------------------------------------ uploads
def test_an_uploaded_zip_becomes_a_robot_a_session_solves_and_it_is_deleted(
    own: OwnServer, tmp_path: Path
) -> None:
    write_urdf_package(tmp_path)
    uploaded = own.client.post(
        "/api/robots",
        files={"file": ("bench_arm.zip", zip_folder(tmp_path), "application/zip")},
    )
    assert uploaded.status_code == 201, uploaded.text
    robot = uploaded.json()
    assert robot["name"] == "bench_arm" and robot["source"] == "uploaded"
    assert robot["category"] == "arm" and "tool0" in robot["preset_reasons"]
    assert (own.data / "robots" / "bench_arm.json").is_file()
    listed = own.client.get("/api/robots", params={"source": "uploaded"}).json()
    assert [r["name"] for r in listed] == ["bench_arm"]
    session = own.client.post("/api/sessions", json={"robot": "bench_arm"}).json()
    drag_and_check(own, session["id"], "bench_arm", "tool0", "body")  # it solves
    in_use = own.client.delete("/api/robots/bench_arm")
    assert in_use.status_code == 409 and in_use.json()["code"] == "robot_in_use"
    assert session["id"] in in_use.json()["detail"]
    assert own.client.delete(f"/api/sessions/{session['id']}").status_code == 204
    assert own.client.delete("/api/robots/bench_arm").status_code == 204
    assert own.client.get("/api/robots/bench_arm").status_code == 404
    assert not (own.data / "robots" / "bench_arm").exists()
    assert not (own.data / "robots" / "bench_arm.json").exists()
    not_uploaded = own.client.delete("/api/robots/arm7")
    assert (
        not_uploaded.status_code == 409 and "only uploaded robots" in not_uploaded.json()["detail"]
    )
    assert own.client.delete("/api/robots/no_such_robot").status_code == 404


def test_a_single_file_upload_and_the_cap_on_uploaded_robots(
    own: OwnServer, tmp_path: Path
) -> None:
    arm = write_mjcf_arm(tmp_path, name="single")
    arm.write_text(
        arm.read_text()
        .replace('<asset><mesh name="upper" file="upper.obj"/></asset>', "")
        .replace('type="mesh" mesh="upper"', 'type="box" size="0.03 0.03 0.15"')
    )
    names = []
    for index in range(3):
        response = own.client.post(
            "/api/robots",
            data={"name": f"single_{index}"},
            files={"file": ("single.xml", arm.read_bytes(), "text/xml")},
        )
        assert response.status_code == 201, response.text
        names.append(response.json()["name"])
    assert names == ["single_0", "single_1", "single_2"]
    full = own.client.post("/api/robots", files={"file": ("single.xml", arm.read_bytes())})
    assert full.status_code == 409 and full.json()["code"] == "too_many_robots"
    taken = own.client.post("/api/robots", data={"name": "my_arm"}, files={"file": ("a.xml", b"")})
    assert taken.status_code == 409  # checked before the file is read
    for name in names:
        assert own.client.delete(f"/api/robots/{name}").status_code == 204


def test_the_default_preset_works_on_an_uploaded_floating_base_robot(own: OwnServer) -> None:
    humanoid = (REPO / "models" / "humanoid.xml").read_bytes()
    uploaded = own.client.post(
        "/api/robots", data={"name": "my_humanoid"}, files={"file": ("humanoid.xml", humanoid)}
    )
    assert uploaded.status_code == 201, uploaded.text
    robot = uploaded.json()
    assert robot["floating_base"] and robot["category"] == "humanoid"
    reasons = robot["preset_reasons"]
    assert "balance" in reasons["com"] and "held in place" in reasons["left_foot"]
    assert "end effector ('hand')" in reasons["left_hand"]
    session = own.client.post("/api/sessions", json={"robot": "my_humanoid"}).json()
    assert {"com", "left_foot", "right_foot", "left_hand", "posture"} <= set(session["tasks"])
    state = settled(own.client, session["id"])
    assert state["status"] == "converged" and state["errors"]["left_foot"] < 1e-6
    own.client.delete(f"/api/sessions/{session['id']}")
    assert own.client.delete("/api/robots/my_humanoid").status_code == 204
