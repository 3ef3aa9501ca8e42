"""Fitting a session spec to a recompiled model, and swapping it into a live session."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from posekit.sessions.live.session import Session
from posekit.sessions.reload.model_fit import carry_q, fit_spec
from posekit.sessions.specs.session_spec import SessionSpec

ARM = """<mujoco><compiler angle="radian"/><worldbody><body name="b1"><joint name="a" range="-1 1"/><geom size=".05"/>
<body name="b2" pos="0 0 .3"><joint name="b" axis="0 1 0" range="-2 2"/><geom size=".05"/>
{extra}<site name="{site}" pos="0 0 .3"/></body></body></worldbody></mujoco>"""


def arm(site: str = "tip", extra: str = "", **ranges: str) -> mujoco.MjModel:
    xml = ARM.format(site=site, extra=extra)
    for joint, new in ranges.items():
        xml = xml.replace(f'name="{joint}" range="-1 1"', f'name="{joint}" range="{new}"')
    return mujoco.MjModel.from_xml_string(xml)


def spec_on(model: mujoco.MjModel) -> SessionSpec:
    return SessionSpec.model_validate(
        {
            "robot": "bench",
            "entry": "bench",
            "q": [0.5, -0.7][: model.nq],
            "tasks": [
                {
                    "name": "tip",
                    "type": "frame",
                    "params": {"frame": "tip"},
                    "target": {"position": [0.1, 0.0, 0.5]},
                },
                {
                    "name": "posture",
                    "type": "posture",
                    "params": {"cost": 0.01},
                    "target": {"q": [0.0, 0.0]},
                },
            ],
            "limits": [
                {"name": "configuration", "type": "configuration"},
                {"name": "speed", "type": "velocity", "params": {"velocities": {"b": 1.0}}},
            ],
        }
    )


def test_q_carries_over_by_joint_name_into_the_new_ranges() -> None:
    old = arm()
    new = mujoco.MjModel.from_xml_string(
        ARM.format(
            site="tip", extra='<body name="b3"><joint name="c"/><geom size=".02"/></body>'
        ).replace('name="a" range="-1 1"', 'name="a" range="-1 0.25"')
    )
    q, kept, reset = carry_q(old, new, [0.5, -0.7])
    assert q == pytest.approx([0.25, -0.7, 0.0]) and kept == 2 and reset == ["c"]


def test_tasks_that_still_fit_are_kept_and_the_others_reported() -> None:
    old = arm()
    new = arm(site="tcp", extra='<body name="b3"><joint name="c"/><geom size=".02"/></body>')
    fitted, report = fit_spec(spec_on(old), old, new)
    assert [t.name for t in fitted.tasks] == ["posture"]
    assert [d.name for d in report.dropped_tasks] == ["tip"]
    assert "site 'tip' does not exist" in report.dropped_tasks[0].reason
    # the posture target had two entries: the task is kept, its target starts anew
    assert [d.name for d in report.reset_targets] == ["posture"]
    assert fitted.tasks[0].target is None
    assert [lim.name for lim in fitted.limits] == ["configuration", "speed"]
    assert report.joints_kept == 2 and report.joints_reset == ["c"]


def test_limits_naming_a_vanished_joint_are_dropped() -> None:
    old = arm()
    new = mujoco.MjModel.from_xml_string(
        ARM.format(site="tip", extra="").replace('name="b"', 'name="bb"')
    )
    fitted, report = fit_spec(spec_on(old), old, new)
    assert [lim.name for lim in fitted.limits] == ["configuration"]
    assert report.dropped_limits[0].name == "speed" and "'b'" in report.dropped_limits[0].reason
    assert [t.name for t in fitted.tasks] == ["tip", "posture"]  # same q size: all kept
    assert report.reset_targets == []


def test_a_session_takes_a_reloaded_model_and_keeps_its_targets() -> None:
    old = arm()
    session = Session("s", spec_on(old), old, "bench")
    revision = session.revision
    longer = mujoco.MjModel.from_xml_string(
        ARM.format(site="tip", extra="").replace('pos="0 0 .3"/>', 'pos="0 0 .5"/>')
    )
    report = session.reload_model(longer, lambda spec, current: fit_spec(spec, current, longer))
    assert session.model is longer and session.revision == revision + 1
    assert report.status == "reloaded" and report.revision == session.revision
    assert session.last_reload == report
    assert session.task("tip").target.position == pytest.approx([0.1, 0.0, 0.5])
    assert session.state.q == pytest.approx([0.5, -0.7])  # a state on the new model at once
    session.step()
    assert np.isfinite(session.q).all()


def test_a_reload_that_cannot_be_built_leaves_the_session_as_it_was() -> None:
    old = arm()
    session = Session("s", spec_on(old), old, "bench")
    before = session.spec()
    other = arm(site="tcp")

    def broken_fit(spec: SessionSpec, current: mujoco.MjModel) -> tuple[SessionSpec, object]:
        return spec, None  # the tip task does not fit the new model: refused

    with pytest.raises(Exception, match="tip"):
        session.reload_model(other, broken_fit)  # type: ignore[arg-type]
    assert session.model is old and session.spec() == before and session.last_reload is None
