"""A session's viewer follows the session, and its gizmos drive it."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import numpy as np
import pytest
from posekit.sessions import SessionManager
from posekit_viewer.session_viewer import SessionViewer


@pytest.fixture
def manager() -> Iterator[SessionManager]:
    manager = SessionManager()
    manager.start()
    yield manager
    manager.shutdown()


@pytest.fixture
def viewer(manager: SessionManager) -> Iterator[SessionViewer]:
    session = manager.create({"robot": "arm7"})
    viewer = SessionViewer(session, "http://test/viewer/x")
    yield viewer
    viewer.stop()


def _wait(condition: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.02)
    raise AssertionError("condition not met in time")


def test_preset_tasks_get_gizmos_at_their_targets(viewer: SessionViewer) -> None:
    _wait(lambda: "ee" in viewer.gizmos.names)
    target = viewer.session.task("ee").target
    handle = viewer.gizmos.handle("ee")
    np.testing.assert_allclose(handle.position, target.position, atol=1e-9)


def test_a_task_added_elsewhere_shows_its_gizmo(viewer: SessionViewer) -> None:
    viewer.session.add_task(
        {
            "type": "look_at",
            "name": "look",
            "params": {"frame": "wrist_cam", "axis": [0, 0, -1]},
            "target": {"position": [0.6, 0.2, 0.1]},
        }
    )
    _wait(lambda: "look" in viewer.gizmos.names)
    np.testing.assert_allclose(viewer.gizmos.handle("look").position, [0.6, 0.2, 0.1], atol=1e-9)
    viewer.session.set_target("look", {"position": [0.5, -0.2, 0.2]})
    _wait(lambda: np.allclose(viewer.gizmos.handle("look").position, [0.5, -0.2, 0.2]))
    viewer.session.remove_task("look")
    _wait(lambda: "look" not in viewer.gizmos.names)


def test_a_gizmo_update_reaches_the_session(viewer: SessionViewer) -> None:
    _wait(lambda: "ee" in viewer.gizmos.names)
    handle = viewer.gizmos.handle("ee")
    handle.position = np.array([0.45, 0.1, 0.35])
    viewer.gizmos._send("ee", "frame", handle, client=None)  # what a drag's callback does
    np.testing.assert_allclose(viewer.session.task("ee").target.position, [0.45, 0.1, 0.35])
    start = viewer.session.state.seq
    _wait(lambda: viewer.session.state.seq > start and viewer.session.state.converged, 10.0)


def test_relative_and_direction_targets_round_trip_through_the_gizmo(viewer: SessionViewer) -> None:
    viewer.session.add_task(
        {"type": "relative_frame", "name": "rel", "params": {"frame": "ee", "root": "link2"}}
    )
    viewer.session.add_task({"type": "axis_align", "name": "align", "params": {"frame": "ee"},
                             "target": {"direction": [0, 0, -1]}})  # fmt: skip
    _wait(lambda: {"rel", "align"} <= set(viewer.gizmos.names))
    viewer.session.set_solver({"paused": True})  # hold q still: these gizmos depend on it
    time.sleep(0.2)
    for name, task_type in (("rel", "relative_frame"), ("align", "axis_align")):
        handle = viewer.gizmos.handle(name)
        target = viewer.gizmos.target_from_gizmo(
            name, task_type, np.asarray(handle.position), np.asarray(handle.wxyz)
        )
        current = viewer.session.task(name).target.model_dump(exclude_none=True)
        for key, value in target.items():
            np.testing.assert_allclose(value, current[key], atol=1e-6)


def test_panels_follow_changes_made_over_rest(viewer: SessionViewer) -> None:
    _wait(lambda: "ee" in viewer.panels._task_widgets)
    viewer.session.patch_task("ee", {"position_cost": 4.25})
    slider, number = viewer.panels._task_widgets["ee"]["position_cost"]
    _wait(lambda: float(number.value) == 4.25)
    assert float(slider.value) == pytest.approx(4.25)


def test_a_rejected_gizmo_target_changes_nothing(viewer: SessionViewer) -> None:
    _wait(lambda: "ee" in viewer.gizmos.names)
    before = viewer.session.task("ee").target
    handle = viewer.gizmos.handle("ee")
    handle.position = np.array([np.nan, 0.0, 0.0])
    viewer.gizmos._send("ee", "frame", handle, client=None)
    assert viewer.session.task("ee").target == before


def test_load_spec_replaces_the_session_or_changes_nothing(viewer: SessionViewer) -> None:
    spec = viewer.session.spec().model_dump(mode="json")
    spec["tasks"] = [t for t in spec["tasks"] if t["type"] == "posture"]
    spec["q"][0] = 0.5
    viewer.panels.load_spec(json.dumps(spec).encode())
    assert [t.type for t in viewer.session.tasks()] == ["posture"]
    _wait(lambda: "ee" not in viewer.gizmos.names)
    before = viewer.session.spec()
    bad = dict(spec, tasks=[{"type": "frame", "params": {"frame": "no_such_site"}}])
    with pytest.raises(Exception, match="no_such_site"):
        viewer.panels.load_spec(json.dumps(bad).encode())
    with pytest.raises(ValueError, match="humanoid"):
        viewer.panels.load_spec(json.dumps(dict(spec, robot="humanoid")).encode())
    assert viewer.session.spec() == before
