"""The viewer's panels act through the session (as REST does) and follow it.

Browser changes are simulated by running each widget's callbacks with a client, as
viser does for a browser's message (see ``support.viewers``). Checks that compare the
session across time pause its solver first.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from posekit.sessions.specs.session_spec import SessionSpec
from posekit_viewer.panel_support import Follower
from posekit_viewer.session_viewer import SessionViewer
from support.viewers import FakeClient, browser_clicks, browser_sets, settled
from support.waiting import wait_for
from viser._gui_handles import UploadedFile


def _tasks_shown(viewer: SessionViewer, *names: str) -> dict:
    return wait_for(
        lambda: set(names) <= set(viewer.panels.tasks.widgets) and viewer.panels.tasks.widgets,
        what=f"task widgets for {names}",
    )


def test_cost_log_slider_and_its_number_patch_the_task(viewer: SessionViewer) -> None:
    widgets = _tasks_shown(viewer, "ee")["ee"]
    cost = widgets["position_cost"]
    client = FakeClient()
    browser_sets(cost.slider, -3.0, client)  # the slider moves along the exponent
    assert viewer.session.task("ee").params.position_cost == 0.001
    assert float(cost.number.value) == 0.001
    browser_sets(cost.slider, 0.5, client)  # readable values: 3 significant digits
    assert viewer.session.task("ee").params.position_cost == 3.16
    browser_sets(cost.number, 0.0035, client)  # an exact value is kept; the slider follows
    wait_for(lambda: viewer.session.task("ee").params.position_cost == 0.0035)
    assert float(cost.slider.value) == pytest.approx(np.log10(0.0035))
    browser_sets(cost.number, 5000.0, client)  # beyond the slider: at its end, value exact
    wait_for(lambda: viewer.session.task("ee").params.position_cost == 5000.0)
    assert float(cost.slider.value) == 3.0
    browser_sets(widgets["gain"], 0.5, client)
    browser_sets(widgets["lm_damping"].number, 0.01, client)
    browser_sets(widgets["enabled"], False, client)
    wait_for(lambda: viewer.session.task("ee").params.lm_damping == 0.01)
    params = viewer.session.task("ee").params
    assert (params.gain, params.lm_damping) == (0.5, 0.01)
    assert viewer.session.task("ee").enabled is False
    assert not client.notifications


def test_a_rejected_panel_change_notifies_and_changes_nothing(viewer: SessionViewer) -> None:
    widgets = _tasks_shown(viewer, "ee")["ee"]
    before = viewer.session.task("ee")
    client = FakeClient()
    browser_sets(widgets["position_cost"].number, -1.0, client)
    wait_for(lambda: client.notifications, what="the refusal")
    assert viewer.session.task("ee") == before
    assert client.notifications[0][0] == "Rejected"
    # The typed field goes back to the last accepted value.
    wait_for(lambda: widgets["position_cost"].number.value == before.params.position_cost)
    # The widget shows the session's value again on a later refresh.
    wait_for(lambda: widgets["position_cost"].value == before.params.position_cost)


def test_panels_follow_changes_made_over_rest(viewer: SessionViewer) -> None:
    _tasks_shown(viewer, "ee")
    viewer.session.patch_task("ee", {"position_cost": 4.25, "gain": 0.3, "enabled": False})
    widgets = viewer.panels.tasks.widgets["ee"]
    cost = widgets["position_cost"]
    wait_for(lambda: cost.value == 4.25)
    assert float(cost.slider.value) == pytest.approx(np.log10(4.25))
    wait_for(lambda: float(widgets["gain"].value) == 0.3 and widgets["enabled"].value is False)
    viewer.session.set_solver({"rate_hz": 30.0, "tolerance": 1e-4, "paused": True})
    solver = viewer.panels.solver.widgets
    wait_for(lambda: solver["paused"].value is True and float(solver["rate_hz"].value) == 30.0)
    tolerance = viewer.panels.solver.log_sliders["tolerance"]
    assert tolerance.value == 1e-4 and float(tolerance.slider.value) == pytest.approx(-4.0)
    viewer.session.remove_task("ee")
    wait_for(lambda: "ee" not in viewer.panels.tasks.widgets)


def test_remove_button_and_add_task_form(viewer: SessionViewer) -> None:
    widgets = _tasks_shown(viewer, "ee")
    client = FakeClient()
    browser_clicks(widgets["ee"]["remove"], client)
    assert "ee" not in [t.name for t in viewer.session.tasks()]
    form = viewer.panels.add_task
    browser_sets(form.task_type, "look_at", client)
    browser_sets(form.frame, "wrist_cam", client)
    browser_sets(form.role, "objective", client)
    browser_clicks(form.add, client)
    look = viewer.session.task("look_at_wrist_cam")
    assert look.params.axis == [0.0, 0.0, -1.0]  # "auto": cameras look along -z
    assert look.target is not None
    browser_sets(form.task_type, "relative_frame", client)
    browser_sets(form.frame_type, "body", client)
    browser_sets(form.frame, "link7", client)
    browser_sets(form.root, "link2", client)
    browser_sets(form.role, "constraint", client)
    browser_clicks(form.add, client)
    relative = next(t for t in viewer.session.tasks() if t.type == "relative_frame")
    assert (relative.params.frame, relative.params.frame_type) == ("link7", "body")
    assert (relative.params.root, relative.role) == ("link2", "constraint")
    browser_sets(form.task_type, "com", client)
    browser_clicks(form.add, client)
    assert any(t.type == "com" for t in viewer.session.tasks())
    assert not client.notifications
    # A task the session refuses (its frame is unknown) is reported and adds nothing.
    count = len(viewer.session.tasks())
    browser_sets(form.task_type, "frame", client)
    browser_sets(form.frame_type, "site", client)
    form.frame._impl.value = "no_such_site"  # a stale page's choice
    browser_clicks(form.add, client)
    assert len(viewer.session.tasks()) == count
    assert client.notifications and "no_such_site" in client.notifications[0][1]


def test_limit_panel_edits_and_follows_the_limits(viewer: SessionViewer) -> None:
    panel = viewer.panels.limits
    session = viewer.session
    client = FakeClient()
    ranges_before = any(s.type == "configuration" for s in session.limits())
    wait_for(lambda: panel.joint_ranges.value == ranges_before)
    browser_sets(panel.joint_ranges, not ranges_before, client)
    assert any(s.type == "configuration" for s in session.limits()) == (not ranges_before)
    browser_sets(panel.max_speed, 2.0, client)
    wait_for(lambda: [s for s in session.limits() if s.type == "velocity"])
    (velocity,) = [s for s in session.limits() if s.type == "velocity"]
    assert set(velocity.params.velocities.values()) == {2.0}
    assert len(velocity.params.velocities) == 7  # every hinge of the arm
    browser_sets(panel.max_speed, 1.5, client)  # patched in place
    wait_for(lambda: session.limit(velocity.name).params.velocities["joint1"] == 1.5)
    (velocity,) = [s for s in session.limits() if s.type == "velocity"]
    assert set(velocity.params.velocities.values()) == {1.5}
    browser_sets(panel.max_speed, 0.0, client)
    wait_for(lambda: not [s for s in session.limits() if s.type == "velocity"])
    # Collision avoidance between a picked pair.
    browser_sets(panel.pair_kind, "body", client)
    browser_sets(panel.first, "link7", client)
    browser_sets(panel.second, "link2", client)
    browser_sets(panel.min_distance, 0.02, client)
    browser_clicks(panel.add_pair, client)
    avoid = session.limit("avoid_link7_link2")
    assert avoid.params.geom_pairs == [(["link7"], ["link2"])]
    assert avoid.params.minimum_distance_from_collisions == 0.02
    assert not client.notifications
    # The list follows: a limit added over REST appears, and can be toggled and removed.
    session.add_limit({"type": "velocity", "name": "slow",
                       "params": {"velocities": {"joint1": 0.5}}})  # fmt: skip
    wait_for(lambda: {"slow", "avoid_link7_link2"} <= set(panel.enabled))
    wait_for(lambda: float(panel.max_speed.value) == 0.5)
    browser_sets(panel.enabled["slow"], False, client)
    assert session.limit("slow").enabled is False
    session.patch_limit("slow", {"enabled": True})
    wait_for(lambda: panel.enabled["slow"].value is True)
    remove = next(r for r in panel._rows if getattr(r, "label", "") == "Remove slow")
    browser_clicks(remove, client)
    assert "slow" not in [s.name for s in session.limits()]
    wait_for(lambda: "slow" not in panel.enabled)
    # A refused pair (the same pair again: its name is taken) is reported, adds nothing.
    count = len(session.limits())
    browser_sets(panel.first, "link7", client)
    browser_sets(panel.second, "link2", client)
    browser_clicks(panel.add_pair, client)
    assert len(session.limits()) == count
    assert client.notifications and "avoid_link7_link2" in client.notifications[0][1]


def test_solver_panel_sets_the_solver(viewer: SessionViewer) -> None:
    widgets = viewer.panels.solver.widgets
    damping = viewer.panels.solver.log_sliders["damping"]
    tolerance = viewer.panels.solver.log_sliders["tolerance"]
    client = FakeClient()
    browser_sets(widgets["paused"], True, client)
    browser_sets(widgets["rate_hz"], 45.0, client)
    browser_sets(damping.slider, -3.0, client)
    settings = viewer.session.solver
    assert (settings.paused, settings.rate_hz, settings.damping) == (True, 45.0, 1e-3)
    browser_sets(tolerance.number, 2.5e-5, client)
    wait_for(lambda: viewer.session.solver.tolerance == 2.5e-5)
    settings = viewer.session.solver
    browser_sets(tolerance.number, 5.0, client)  # above the allowed 1.0
    wait_for(lambda: client.notifications, what="the refusal")
    assert viewer.session.solver.tolerance == settings.tolerance


def test_joint_sliders_pose_the_robot_and_follow_q(viewer: SessionViewer) -> None:
    viewer.session.set_solver({"paused": True})  # keep a hand-made pose
    wait_for(lambda: settled(viewer))
    address, slider = viewer.panels.joints.sliders["joint2"]
    browser_sets(slider, 0.7, FakeClient())
    assert viewer.session.q[address] == pytest.approx(0.7)
    q = np.array(viewer.session.q)
    q[address] = -0.4
    viewer.session.set_q(q)
    wait_for(lambda: abs(float(slider.value) + 0.4) < 1e-3, what="slider follows q")


def test_session_panel_keyframe_save_and_viewers(viewer: SessionViewer) -> None:
    panel = viewer.panels.session
    client = FakeClient()
    viewer.session.set_solver({"paused": True})
    q = np.array(viewer.session.q)
    q[:] += 0.1
    viewer.session.set_q(q)
    browser_sets(panel.keyframe, "home", client)
    browser_clicks(panel.reset, client)
    home = viewer.session.model.key("home").qpos
    np.testing.assert_allclose(viewer.session.q, home)
    browser_clicks(panel.save, client)
    ((filename, payload),) = client.downloads
    assert filename.endswith(".json")
    assert SessionSpec.model_validate(json.loads(payload)) == viewer.session.spec()
    assert panel.share.value == "http://test/viewer/x"
    assert "Copy session link" in panel.copy_link.content
    wait_for(lambda: "Viewers:** 0" in panel.viewers.content)
    wait_for(lambda: "Solve time" in panel.solve_time.content)


def test_an_uploaded_spec_replaces_the_session_or_is_refused(viewer: SessionViewer) -> None:
    load = viewer.panels.session.load
    client = FakeClient()
    spec = viewer.session.spec().model_dump(mode="json")
    spec["tasks"] = [t for t in spec["tasks"] if t["type"] == "posture"]
    spec["solver"]["paused"] = True  # q then stays as loaded
    load._impl.value = UploadedFile("good.json", json.dumps(spec).encode())
    browser_clicks(load, client)  # viser runs the upload callbacks like a click's
    assert [t.type for t in viewer.session.tasks()] == ["posture"]
    assert not client.notifications
    before = viewer.session.spec()
    load._impl.value = UploadedFile("other.json", json.dumps(dict(spec, robot="humanoid")).encode())
    browser_clicks(load, client)
    assert client.notifications and "humanoid" in client.notifications[0][1]
    assert viewer.session.spec() == before


def test_display_switches_the_optional_layers(viewer: SessionViewer) -> None:
    display = viewer.panels.display
    renderer = viewer.renderer
    client = FakeClient()
    for checkbox, handles in (
        (display.collision, lambda: renderer.collision_handles.values()),
        (display.frames, lambda: renderer.frame_handles.values()),
        (display.com, lambda: [renderer.com_handle]),
    ):
        assert not any(h.visible for h in handles())
        browser_sets(checkbox, True, client)
        assert all(h.visible for h in handles())
        browser_sets(checkbox, False, client)
        assert not any(h.visible for h in handles())


def test_the_error_plot_tracks_every_task(viewer: SessionViewer) -> None:
    plot = viewer.panels.errors
    wait_for(lambda: plot.tasks == ("ee", "posture"))
    viewer.session.add_task({"type": "com", "name": "com"})
    wait_for(lambda: plot.tasks == ("ee", "posture", "com"))
    viewer.session.set_solver({"paused": True})  # the error stays as large as the move
    viewer.session.set_target("ee", {"position": [0.4, 0.1, 0.3]})
    wait_for(lambda: len(plot.plot.data) == 4 and np.max(plot.plot.data[1]) > 1e-2,
             what="the ee error plotted")  # fmt: skip
    assert len(plot.plot.data[0]) >= 2  # time + one series per task, several points


def test_the_limits_panel_says_which_limit_holds_which_joints(viewer: SessionViewer) -> None:
    session = viewer.session
    session.add_limit({"type": "configuration", "name": "range"})
    session.patch_task("ee", {"enabled": False})
    session.set_target("posture", {"q": [10.0] * session.model.nq})  # beyond every range
    panel = viewer.panels.limits
    wait_for(lambda: "`range` holds" in panel.binding.content, what="the binding limit shown")
    assert "joint1" in panel.binding.content


def test_a_typed_number_applies_only_its_last_value_once_typing_pauses(
    viewer: SessionViewer,
) -> None:
    """Typing 0.05 keystroke by keystroke sends 0, 0.0, 0.05: only 0.05 reaches the
    session; a refused value puts the last accepted one back in the field."""
    cost = _tasks_shown(viewer, "ee")["ee"]["position_cost"]
    client = FakeClient()
    revision = viewer.session.revision
    for prefix in (0.0, 0.0, 0.05):
        browser_sets(cost.number, prefix, client)
    wait_for(lambda: viewer.session.task("ee").params.position_cost == 0.05)
    assert viewer.session.revision == revision + 1  # one change, not three
    for prefix in (2.0, 25.0, -250.0):  # the last keystroke is refused
        browser_sets(cost.number, prefix, client)
    wait_for(lambda: client.notifications, what="the refusal")
    wait_for(lambda: float(cost.number.value) == 0.05)
    assert viewer.session.task("ee").params.position_cost == 0.05


def test_a_widget_being_edited_is_not_overwritten() -> None:
    class Widget:
        def __init__(self) -> None:
            self.value = 1.0
            self.update_timestamp = 0.0

    import time

    widget = Widget()
    follower = Follower(hold=60.0)
    follower.show(widget, 2.0)  # not edited recently: follows
    assert widget.value == 2.0
    widget.update_timestamp = time.time()  # a browser just changed it
    widget.value = 3.0
    follower.show(widget, 2.0)
    assert widget.value == 3.0


def test_a_reload_of_the_robot_files_is_shown_in_the_session_panel(
    viewer: SessionViewer,
) -> None:
    """A reload that failed (the edited files do not compile) and one that dropped a task
    are shown where the user looks, not only over the API."""
    from posekit.sessions.reload.reload_report import Dropped, ReloadReport

    panel = viewer.panels.session
    assert panel.robot_files.content == ""
    failed = ReloadReport(
        robot="arm7", entry="arm7", time=1.0, status="failed", error="arm7.xml: XML parse error"
    )
    viewer.session.report_reload(failed)
    wait_for(lambda: "could not be used: arm7.xml: XML parse error" in panel.robot_files.content)
    dropped = ReloadReport(
        robot="arm7",
        entry="arm7",
        time=2.0,
        status="reloaded",
        dropped_tasks=[Dropped(name="ee", reason="site 'ee' does not exist")],
    )
    viewer.session.report_reload(dropped)
    wait_for(lambda: "dropped task `ee`: site 'ee' does not exist" in panel.robot_files.content)
