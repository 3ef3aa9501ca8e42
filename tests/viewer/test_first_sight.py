"""What a newcomer sees first, without a browser: the status of a session that settled
short of its targets, the solve time, the scene's mocap bodies, gizmo size, exports and
a quiet terminal.

Sessions here belong to a manager that is never started: nothing steps them but the
test (``session.step()``), and the viewers draw only on ``tick()``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator

import mujoco
import numpy as np
import pytest
from posekit.sessions import SessionManager
from posekit.sessions.export.export_script import keyframe_line, python_script
from posekit.sessions.live.session import Session
from posekit_viewer.gizmos import gizmo_scale
from posekit_viewer.scene_renderer import MOCAP_OPACITY, MOCAP_RGB, MOCAP_ROOT
from posekit_viewer.session_viewer import SessionViewer
from posekit_viewer.target_shortfall import SHORT_M, TargetShortfall
from support.models import needs_menagerie
from support.viewers import FakeClient, browser_clicks, browser_sets

UNREACHABLE = [0.8, 0.0, 0.3]  # beyond arm7's reach from its home pose: parks 0.1 m short
REACHABLE = [0.42, 0.15, 0.35]


@pytest.fixture
def manual() -> Iterator[SessionManager]:
    """A manager whose sessions only step when a test steps them."""
    sessions = SessionManager()
    yield sessions
    sessions.shutdown()


def _viewer(session: Session) -> SessionViewer:
    return SessionViewer(session, "http://test/viewer/x", start=False)


def _park(session: Session, max_steps: int = 500) -> None:
    for _ in range(max_steps):
        if session.step().status != "running":
            return
    raise AssertionError("the session did not park")


def _site_distance(session: Session, site: str, target: list[float]) -> float:
    data = mujoco.MjData(session.model)
    data.qpos[:] = session.state.q
    mujoco.mj_kinematics(session.model, data)
    return float(np.linalg.norm(data.site(site).xpos - np.array(target)))


def test_a_session_parked_short_of_its_target_says_which_and_by_how_much(
    manual: SessionManager,
) -> None:
    session = manual.create({"robot": "arm7"})
    viewer = _viewer(session)
    try:
        session.set_target("ee", {"position": UNREACHABLE})
        _park(session)
        assert session.state.status == "converged"  # a fixed point: the best compromise
        viewer.tick(now=100.0)
        status = viewer.panels.session.status.content
        assert "settled short of its targets" in status and "converged" not in status
        shown = float(re.search(r"ee ([0-9.e+-]+) m", status).group(1))  # type: ignore[union-attr]
        distance = _site_distance(session, "ee", UNREACHABLE)
        assert distance > 0.05
        assert shown == pytest.approx(distance, rel=0.05)  # two significant digits
        short = TargetShortfall(session.model).of(session.state, session.revision, session.tasks)
        (position,) = [s for s in short if s.unit == "m"]
        assert position.task == "ee" and position.amount == pytest.approx(distance, rel=0.01)
        # Reached again: plain "converged".
        session.set_target("ee", {"position": REACHABLE})
        _park(session)
        assert _site_distance(session, "ee", REACHABLE) < SHORT_M
        viewer.tick(now=200.0)
        assert viewer.panels.session.status.content.startswith("**Status:** converged")
    finally:
        viewer.stop()


def test_an_axis_without_cost_is_no_target(manual: SessionManager) -> None:
    session = manual.create({"robot": "arm7"})
    session.patch_task("ee", {"position_cost": [1.0, 1.0, 0.0]})  # height free
    session.set_target("ee", {"position": [0.45, 0.0, 0.05]})  # 20 cm lower than home
    _park(session)
    short = TargetShortfall(session.model).of(session.state, session.revision, session.tasks)
    assert _site_distance(session, "ee", [0.45, 0.0, 0.05]) > 0.1
    assert not [s for s in short if s.unit == "m"]


def test_the_solve_time_is_the_median_of_recent_steps(manual: SessionManager) -> None:
    session = manual.create({"robot": "arm7"})
    viewer = _viewer(session)
    try:
        session.set_target("ee", {"position": REACHABLE})
        for frame in range(6):
            session.step()
            viewer.tick(now=100.0 + frame)
        times = viewer.panels.session.solve_times
        assert times.count == 6
        assert (
            f"median {times.median():.0f} µs of 6 steps" in viewer.panels.session.solve_time.content
        )
    finally:
        viewer.stop()


def test_gizmos_scale_with_the_robot(manual: SessionManager) -> None:
    session = manual.create({"robot": "humanoid"})
    viewer = _viewer(session)
    try:
        viewer.tick(now=100.0)
        low, high = viewer.renderer.bounds()  # type: ignore[misc]
        assert 1.5 < high[2] - low[2] < 1.9  # the humanoid stands 1.7 m tall
        assert viewer.gizmos.scale == pytest.approx(gizmo_scale(low, high))
        for name in viewer.gizmos.names:
            assert viewer.gizmos.handle(name).scale == pytest.approx(viewer.gizmos.scale)
        arm = _viewer(manual.create({"robot": "arm7"}))
        try:
            assert 1.5 * arm.gizmos.scale < viewer.gizmos.scale  # a bigger robot, bigger gizmos
        finally:
            arm.stop()
    finally:
        viewer.stop()


@needs_menagerie
def test_scene_mocap_bodies_are_drawn_muted_without_gizmos(manual: SessionManager) -> None:
    session = manual.create({"robot": "unitree_g1"})
    viewer = _viewer(session)
    try:
        viewer.tick(now=100.0)
        model = session.model
        mocap = {b for b in range(model.nbody) if model.body_mocapid[b] >= 0}
        assert len(mocap) == 5  # G1's scene: com, palm and foot target markers
        renderer = viewer.renderer
        assert set(renderer.mocap_handles) == mocap
        assert not mocap & set(renderer.body_handles) and not mocap & set(renderer.static_handles)
        for body, handle in renderer.mocap_handles.items():
            assert handle.name == f"{MOCAP_ROOT}/{model.body(body).name}"
            assert handle.opacity == MOCAP_OPACITY < 0.5 and tuple(handle.color) == MOCAP_RGB
            assert handle.visible
        # No gizmo sits on them: gizmos are the session's tasks, at their targets.
        markers = np.array([model.body(b).pos for b in mocap])
        for name in viewer.gizmos.names:
            position = np.asarray(viewer.gizmos.handle(name).position)
            assert np.min(np.linalg.norm(markers - position, axis=1)) > 0.05
        # The robot's box leaves them out (they float 0.5 m in front of it).
        _, high = renderer.bounds()  # type: ignore[misc]
        assert high[0] < 0.45
        client = FakeClient()
        browser_sets(viewer.panels.display.mocap, False, client)
        assert not any(h.visible for h in renderer.mocap_handles.values())
        browser_sets(viewer.panels.display.mocap, True, client)
        assert all(h.visible for h in renderer.mocap_handles.values())
    finally:
        viewer.stop()


def test_export_buttons_download_the_script_and_the_keyframe(manual: SessionManager) -> None:
    session = manual.create({"robot": "arm7"})
    viewer = _viewer(session)
    try:
        session.set_target("ee", {"position": REACHABLE})
        for _ in range(3):
            session.step()
        panel = viewer.panels.session
        client = FakeClient()
        browser_clicks(panel.export_python, client)
        browser_clicks(panel.export_key, client)
        (script_name, script), (key_name, key) = client.downloads
        assert script_name == f"posekit_{session.id}.py" and key_name.endswith(".xml")
        assert script.decode() == python_script(session.spec(), session.model, session.id)
        compile(script, script_name, "exec")
        assert key.decode().strip() == keyframe_line(session.spec().q)
    finally:
        viewer.stop()


def test_starting_and_stopping_a_viewer_prints_nothing(
    manual: SessionManager, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    session = manual.create({"robot": "arm7"})
    capfd.readouterr()
    with caplog.at_level(logging.DEBUG, logger="viser"):
        viewer = _viewer(session)
        viewer.stop()
        logging.getLogger("posekit.test").warning("posekit's own logs still flow")
    out, err = capfd.readouterr()
    assert "viser" not in out + err and "Server stopped" not in out + err
    viser_lines = [r.getMessage() for r in caplog.records if r.name == "viser"]
    assert any("Server stopped" in line for line in viser_lines)  # kept, at DEBUG
    assert all(r.levelno == logging.DEBUG for r in caplog.records if r.name == "viser")
    assert any(r.name == "posekit.test" for r in caplog.records)
