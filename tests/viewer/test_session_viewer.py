"""A session's viewer follows the session, and its gizmos drive it.

Tests that compare the session across time pause its solver first (and wait until the
viewer has drawn the paused state): a running solve loop moves q between two reads.
"""

from __future__ import annotations

import json
import socket
import time

import numpy as np
import pytest
from posekit.sessions import SessionManager
from posekit_viewer.session_viewer import SessionViewer
from support.viewers import FakeClient, MessageLog, close, drag_end, drag_start, drag_to, settled
from support.waiting import wait_for

DOWN = [0.0, 1.0, 0.0, 0.0]  # tool pointing down


def _pause(viewer: SessionViewer) -> None:
    viewer.session.set_solver({"paused": True})
    wait_for(lambda: settled(viewer), what="paused session drawn")


def test_preset_tasks_get_gizmos_at_their_targets(viewer: SessionViewer) -> None:
    wait_for(lambda: "ee" in viewer.gizmos.names)
    target = viewer.session.task("ee").target
    handle = viewer.gizmos.handle("ee")
    np.testing.assert_allclose(handle.position, target.position, atol=1e-9)
    np.testing.assert_allclose(np.abs(np.dot(handle.wxyz, target.wxyz)), 1.0, atol=1e-9)


def test_gizmo_kinds_follow_the_task_type(viewer: SessionViewer) -> None:
    session = viewer.session
    session.add_task({"type": "look_at", "name": "look", "params": {"frame": "wrist_cam"},
                      "target": {"position": [0.6, 0.2, 0.1]}})  # fmt: skip
    session.add_task({"type": "com", "name": "com"})
    session.add_task({"type": "axis_align", "name": "align", "params": {"frame": "ee"},
                      "target": {"direction": [0, 0, -1]}})  # fmt: skip
    session.add_task({"type": "relative_frame", "name": "rel",
                      "params": {"frame": "ee", "root": "link2"}})  # fmt: skip
    wait_for(lambda: {"ee", "look", "com", "align", "rel"} <= set(viewer.gizmos.names))
    for six_dof in ("ee", "rel"):
        handle = viewer.gizmos.handle(six_dof)
        assert not (handle.disable_rotations or handle.disable_axes or handle.disable_sliders)
    for point in ("look", "com"):  # translation only
        handle = viewer.gizmos.handle(point)
        assert handle.disable_rotations and not handle.disable_axes
    align = viewer.gizmos.handle("align")  # rotation only, with an arrow along +z
    assert align.disable_axes and align.disable_sliders and not align.disable_rotations
    assert "/targets/align/direction" in viewer.server.scene._handle_from_node_name
    np.testing.assert_allclose(viewer.gizmos.handle("com").position,
                               session.task("com").target.position, atol=1e-9)  # fmt: skip


def test_a_task_added_over_rest_shows_its_gizmo_and_follows_it(viewer: SessionViewer) -> None:
    viewer.session.add_task(
        {
            "type": "look_at",
            "name": "look",
            "params": {"frame": "wrist_cam", "axis": [0, 0, -1]},
            "target": {"position": [0.6, 0.2, 0.1]},
        }
    )
    wait_for(lambda: "look" in viewer.gizmos.names)
    np.testing.assert_allclose(viewer.gizmos.handle("look").position, [0.6, 0.2, 0.1], atol=1e-9)
    viewer.session.set_target("look", {"position": [0.5, -0.2, 0.2]})
    wait_for(lambda: close(viewer.gizmos.handle("look").position, [0.5, -0.2, 0.2]))
    viewer.session.remove_task("look")
    wait_for(lambda: "look" not in viewer.gizmos.names)
    assert "/targets/look" not in viewer.server.scene._handle_from_node_name


def test_a_gizmo_drag_reaches_the_session_and_moves_q(viewer: SessionViewer) -> None:
    wait_for(lambda: "ee" in viewer.gizmos.names)
    wait_for(lambda: viewer.session.state.converged, what="preset converged")
    q_before = np.array(viewer.session.q)
    # Through viser's own handler of a browser's gizmo message.
    drag_to(viewer.server, "/targets/ee", [0.45, 0.1, 0.35], DOWN)
    target = viewer.session.task("ee").target
    np.testing.assert_allclose(target.position, [0.45, 0.1, 0.35])
    np.testing.assert_allclose(np.abs(np.dot(target.wxyz, DOWN)), 1.0, atol=1e-9)
    wait_for(lambda: np.max(np.abs(np.array(viewer.session.state.q) - q_before)) > 0.05,
             what="q moved toward the dragged target")  # fmt: skip


def test_a_dragged_gizmo_never_jumps_and_follows_once_released(viewer: SessionViewer) -> None:
    wait_for(lambda: "ee" in viewer.gizmos.names)
    _pause(viewer)
    handle = viewer.gizmos.handle("ee")
    drag_start(viewer.server, "/targets/ee")
    assert viewer.gizmos.dragging("ee")
    drag_to(viewer.server, "/targets/ee", [0.40, 0.0, 0.30], DOWN)
    # A REST client moves the target while the hand still holds the gizmo.
    viewer.session.set_target("ee", {"position": [0.30, 0.2, 0.40]})
    wait_for(lambda: settled(viewer), what="change drawn")
    np.testing.assert_allclose(handle.position, [0.40, 0.0, 0.30], atol=1e-9)
    drag_end(viewer.server, "/targets/ee")
    assert not viewer.gizmos.dragging("ee")
    # Released: the gizmo shows the session's target, which the REST client set last.
    wait_for(lambda: close(handle.position, [0.30, 0.2, 0.40]), what="gizmo follows REST")
    np.testing.assert_allclose(viewer.session.task("ee").target.position, [0.30, 0.2, 0.40])


def test_a_rejected_drag_changes_nothing_and_the_gizmo_returns(viewer: SessionViewer) -> None:
    wait_for(lambda: "ee" in viewer.gizmos.names)
    _pause(viewer)
    before = viewer.session.spec()
    handle = viewer.gizmos.handle("ee")
    drag_to(viewer.server, "/targets/ee", [np.nan, 0.0, 0.0], DOWN)
    assert viewer.session.spec() == before
    np.testing.assert_allclose(handle.position, before.tasks[0].target.position, atol=1e-9)
    client = FakeClient()
    accepted = viewer.gizmos.apply_drag("ee", np.array([0.4, np.inf, 0.3]), np.array(DOWN), client)
    assert not accepted
    assert client.notifications and client.notifications[0][0] == "Target rejected"
    assert viewer.session.spec() == before


def test_relative_and_direction_targets_round_trip_through_the_gizmo(
    viewer: SessionViewer,
) -> None:
    viewer.session.add_task(
        {"type": "relative_frame", "name": "rel", "params": {"frame": "ee", "root": "link2"}}
    )
    viewer.session.add_task({"type": "axis_align", "name": "align", "params": {"frame": "ee"},
                             "target": {"direction": [0, 0, -1]}})  # fmt: skip
    wait_for(lambda: {"rel", "align"} <= set(viewer.gizmos.names))
    _pause(viewer)  # these gizmos are drawn relative to frames that move with q
    for name in ("rel", "align"):
        handle = viewer.gizmos.handle(name)
        target = viewer.gizmos.target_from_gizmo(
            name, np.asarray(handle.position), np.asarray(handle.wxyz)
        )
        current = viewer.session.task(name).target.model_dump(exclude_none=True)
        for key, value in target.items():
            np.testing.assert_allclose(value, current[key], atol=1e-6)


def test_scene_and_gizmos_change_in_one_atomic_update_only_when_needed(
    viewer: SessionViewer,
) -> None:
    wait_for(lambda: "ee" in viewer.gizmos.names)
    _pause(viewer)
    log = MessageLog(viewer.server)
    time.sleep(0.3)  # ~18 render ticks with nothing new: nothing is sent
    assert not log.poses("/robot") and not log.poses("/targets")
    # A new target with q unchanged: the gizmo moves, the robot is not rewritten.
    viewer.session.set_target("ee", {"position": [0.35, 0.1, 0.3]})
    wait_for(lambda: settled(viewer))
    assert log.poses("/targets/ee") and not log.poses("/robot")
    # A new q: the bodies and the gizmo of a q-dependent task move in one atomic block.
    viewer.session.add_task({"type": "axis_align", "name": "align", "params": {"frame": "ee"},
                             "target": {"direction": [0, 0, -1]}})  # fmt: skip
    wait_for(lambda: "align" in viewer.gizmos.names and settled(viewer))
    log.clear()
    q = np.array(viewer.session.q)
    q[0] += 0.3
    viewer.session.set_q(q)
    wait_for(lambda: settled(viewer) and log.poses("/targets/align"))
    frame = log.poses("/robot/visual") + log.poses("/targets/align")
    assert log.poses("/robot/visual")
    first, last = min(frame), max(frame)
    assert all(log.entries[i][2] >= 1 for i in frame), "a pose was sent outside server.atomic()"
    assert ("FLUSH", None, 0) not in log.entries[first:last], "the frame was split"
    assert not log.kinds() & {"GlbMessage", "MeshMessage"}, "geometry re-uploaded"


def test_the_viewer_stops_with_its_session(manager: SessionManager) -> None:
    session = manager.create({"robot": "arm7"})
    live = SessionViewer(session, "http://test/viewer/x")
    port = live.server.get_port()
    socket.create_connection(("127.0.0.1", port), timeout=5).close()  # listening meanwhile
    manager.delete(session.id)
    wait_for(lambda: live.stopped, what="viewer stopped")
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    live.stop()  # idempotent


def test_load_spec_replaces_the_session_or_changes_nothing(viewer: SessionViewer) -> None:
    spec = viewer.session.spec().model_dump(mode="json")
    spec["tasks"] = [t for t in spec["tasks"] if t["type"] == "posture"]
    spec["q"][0] = 0.5
    # Loaded paused, the session holds q still: the posture task would otherwise pull
    # q[0] back toward 0 between the snapshot below and the final comparison.
    spec["solver"]["paused"] = True
    viewer.panels.load_spec(json.dumps(spec).encode())
    assert [t.type for t in viewer.session.tasks()] == ["posture"]
    assert viewer.session.solver.paused
    assert viewer.session.q[0] == pytest.approx(0.5)
    wait_for(lambda: "ee" not in viewer.gizmos.names)
    before = viewer.session.spec()
    bad = dict(spec, tasks=[{"type": "frame", "params": {"frame": "no_such_site"}}])
    with pytest.raises(Exception, match="no_such_site"):
        viewer.panels.load_spec(json.dumps(bad).encode())
    with pytest.raises(ValueError, match="humanoid"):
        viewer.panels.load_spec(json.dumps(dict(spec, robot="humanoid")).encode())
    with pytest.raises(ValueError):
        viewer.panels.load_spec(b"{not json")
    assert viewer.session.spec() == before
