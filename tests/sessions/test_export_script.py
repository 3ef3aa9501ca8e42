"""Export what was tuned: the Python script rebuilds the session and solves as it does,
and the keyframe line is the session's q.

Each script runs in a subprocess, from a directory outside the repository, and takes
exactly as many steps as the session (stepped by the test, no solve loop), from the same
q: their configurations must agree to 1e-9 (they are computed by the same operations on
the same numbers, so in practice they are equal).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import pytest
from posekit.robots import RobotRegistry
from posekit.sessions import Session, SessionSpec
from posekit.sessions.export.export_code import LIMIT_CODE, TASK_CODE
from posekit.sessions.export.export_script import is_builtin, keyframe_line, python_script
from posekit.sessions.kinds import LIMIT_KINDS, TASK_KINDS
from support.models import REPO_ROOT, needs_menagerie
from support.robot_files import write_mjcf_arm

REGISTRY = RobotRegistry()

ARM_EVERYTHING: dict[str, Any] = {
    "robot": "arm7",
    "tasks": [
        {"name": "ee", "type": "frame", "params": {"frame": "ee", "orientation_cost": [1, 1, 0.2],
                                                  "lm_damping": 0.01},
         "target": {"position": [0.42, 0.15, 0.35], "wxyz": [0.0, 1.0, 0.0, 0.0]}},
        {"name": "rel", "type": "relative_frame",
         "params": {"frame": "hand", "frame_type": "body", "root": "link2", "position_cost": 0.1,
                    "orientation_cost": 0.0}},
        {"name": "com", "type": "com", "params": {"cost": [0.1, 0.1, 0.0]},
         "target": {"position": [0.1, 0.0, 0.3]}},
        {"name": "look", "type": "look_at",
         "params": {"frame": "wrist_cam", "axis": [0, 0, -1], "cost": 0.05},
         "target": {"position": [0.7, 0.3, 0.0]}},
        {"name": "align", "type": "axis_align", "params": {"frame": "ee", "cost": 0.02},
         "target": {"direction": [0.1, 0.0, -1.0]}},
        {"name": "freeze", "type": "dof_freezing", "role": "constraint",
         "params": {"joints": ["joint7"]}},
        {"name": "posture", "type": "posture", "params": {"cost": {"joint1": 0.01, "joint4": 0.002}},
         "target": {"keyframe": "home"}},
        {"name": "damping", "type": "damping", "params": {"cost": 1e-3}},
        {"name": "energy", "type": "kinetic_energy", "params": {"cost": 1e-5}},
        {"name": "off", "type": "frame", "enabled": False, "params": {"frame": "wrist_cam"}},
    ],
    "limits": [
        {"type": "configuration", "params": {"gain": 0.9}},
        {"type": "velocity", "params": {"velocities": {"joint1": 1.5, "joint2": 1.0}}},
        {"name": "floor", "type": "collision_avoidance",
         "params": {"geom_pairs": [[["hand"], ["floor"]]], "minimum_distance_from_collisions": 0.02,
                    "collision_detection_distance": 0.1}},
        {"name": "slow", "type": "velocity", "enabled": False,
         "params": {"velocities": {"joint3": 0.1}}},
    ],
    "solver": {"solver": "daqp", "dt": 0.02, "damping": 1e-5, "tolerance": 1e-7},
}  # fmt: skip


def _session(request: dict[str, Any]) -> Session:
    """A session without a solve loop, from a spec (its q: the robot's first keyframe)."""
    entry = REGISTRY.resolve_entry(request["robot"], request.get("entry"))
    model = REGISTRY.model(request["robot"], entry)
    spec = SessionSpec.model_validate({"q": model.key_qpos[0].tolist(), **request})
    return Session("exported", spec, model, entry)


def _preset(robot: str) -> Session:
    """A session on ``robot`` with its default preset, without a solve loop."""
    from posekit.sessions import SessionManager

    manager = SessionManager(REGISTRY)  # never started: nothing steps it but the test
    return manager.create({"robot": robot})


def _run(script: str, directory: Path, *arguments: str) -> dict[str, Any]:
    path = directory / "exported.py"
    path.write_text(script)
    done = subprocess.run(
        [sys.executable, str(path), *arguments], cwd=directory, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def _same_steps(session: Session, directory: Path, steps: int) -> None:
    """Export, then step the session and the script ``steps`` times; compare q."""
    start = np.array(session.q)
    script = python_script(session.spec(), session.model, session.id)
    for _ in range(steps):
        session.step()
    result = _run(script, directory, "--steps", str(steps))
    assert np.linalg.norm(np.array(session.q) - start) > 1e-3  # the steps did move q
    np.testing.assert_allclose(result["q"], session.q, rtol=0.0, atol=1e-9)
    assert result["steps"] == steps


def test_every_task_and_limit_kind_can_be_exported() -> None:
    assert set(TASK_CODE) == set(TASK_KINDS)
    assert set(LIMIT_CODE) == set(LIMIT_KINDS)


def test_the_script_steps_every_kind_exactly_as_the_session(tmp_path: Path) -> None:
    session = _session(ARM_EVERYTHING)
    script = python_script(session.spec(), session.model, session.id)
    assert "import posekit" in script and "posekit.solve_ik(" in script
    assert "# off: disabled in the session" in script
    assert 'constraints = [tasks["freeze"]]' in script
    assert (
        'active_limits = [limits["configuration"], limits["velocity"], limits["floor"]]' in script
    )
    _same_steps(session, tmp_path, 40)


def test_the_script_runs_until_the_session_would_park(tmp_path: Path) -> None:
    session = _preset("arm7")
    session.set_target("ee", {"position": [0.42, 0.15, 0.35]})
    script = python_script(session.spec(), session.model, session.id)
    steps = 0
    while session.step().status == "running":
        steps += 1
    result = _run(script, tmp_path)  # no --steps: until parked
    assert result["parked"] and result["steps"] == steps + 1  # the parking step included
    np.testing.assert_allclose(result["q"], session.q, rtol=0.0, atol=1e-9)
    assert result["errors"]["ee"] < 1e-4


def test_a_humanoid_preset_with_a_free_joint_limit(tmp_path: Path) -> None:
    session = _preset("humanoid")
    session.add_limit({"type": "free_joint_velocity", "params": {"max_linear_velocity": 0.5}})
    hand = session.task("left_hand").target
    assert hand is not None and hand.position is not None
    moved = [p + d for p, d in zip(hand.position, [0.1, 0.1, 0.2], strict=True)]
    session.set_target("left_hand", {"position": moved})
    _same_steps(session, tmp_path, 30)


@needs_menagerie
@pytest.mark.parametrize("robot", ["unitree_g1", "aloha"])
def test_menagerie_robots(robot: str, tmp_path: Path) -> None:
    session = _preset(robot)
    assert not is_builtin(robot)
    if robot == "aloha":  # its finger couplings, as a hard equality
        session.add_task({"name": "fingers", "type": "equality", "role": "constraint",
                          "params": {"equalities": ["#0", "#1"]}})  # fmt: skip
    name = next(t.name for t in session.tasks() if t.type == "frame")
    target = session.task(name).target
    assert name is not None and target is not None and target.position is not None
    session.set_target(name, {"position": [target.position[0] + 0.05, *target.position[1:]]})
    script = python_script(session.spec(), session.model, session.id)
    assert "mujoco_menagerie.get(" in script
    _same_steps(session, tmp_path, 20)


def test_the_keyframe_line_is_the_exact_q() -> None:
    session = _preset("arm7")
    session.set_target("ee", {"position": [0.42, 0.15, 0.35]})
    for _ in range(5):
        session.step()
    q = session.spec().q
    line = keyframe_line(q, "tuned")
    assert line.startswith('<key name="tuned" qpos="') and line.endswith('"/>')
    xml = (REPO_ROOT / "models" / "arm7.xml").read_text()
    assert "<keyframe>" in xml
    model = mujoco.MjModel.from_xml_string(xml.replace("<keyframe>", f"<keyframe>\n{line}"))
    assert model.key("tuned").qpos.tolist() == q  # bit for bit


def test_a_robot_from_a_file_is_embedded_and_solves_as_the_session(tmp_path: Path) -> None:
    """A robot neither built in nor in Menagerie (here an MJCF arm with an OBJ mesh from a
    folder) travels in the script as its compiled model: the script runs from another
    directory, without the robot's files, and steps exactly as the session."""
    registry = RobotRegistry(menagerie=False)
    registry.add_file("my_arm", write_mjcf_arm(tmp_path / "robot"))
    model = registry.model("my_arm")
    tool = {"name": "tool", "type": "frame", "params": {"frame": "tool"}}
    q = [0.1, 0.4, -0.3][: model.nq]
    spec = SessionSpec.model_validate({"robot": "my_arm", "q": q, "tasks": [tool]})
    session = Session("s", spec, model, "my_arm")
    target = session.task("tool").target
    assert target is not None and target.position is not None
    session.set_target("tool", {"position": [target.position[0] + 0.03, *target.position[1:]]})
    script = python_script(session.spec(), session.model, session.id)
    assert "mujoco_menagerie" not in script and "from_binary_path" in script
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _same_steps(session, elsewhere, 20)
