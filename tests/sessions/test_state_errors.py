"""A state's error norms: one compiled call on the compiled engine, the tasks' own
``compute_error`` otherwise, and the same numbers either way (to 1e-9)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import mujoco
import numpy as np
import posekit
import pytest
from posekit.ik.compiled.engine import error_norms, forget_warnings
from posekit.robots import RobotRegistry
from posekit.sessions import Session, SessionSpec, SessionState
from posekit.sessions.live import step as step_module
from posekit.sessions.live.step import Plan, solve_step, task_errors
from posekit.sessions.specs.solver_settings import SolverSettings

TOLERANCE = 1e-9
ARM = RobotRegistry().model("arm7")
# Two arms, coupled by a joint equality; the second pinned to the world by a connect.
COUPLED = mujoco.MjModel.from_xml_string(
    """
<mujoco>
  <worldbody>
    <body name="upper"><joint name="shoulder" axis="0 1 0" range="-2 2"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
      <body name="lower" pos="0.3 0 0"><joint name="elbow" axis="0 1 0" range="-2 2"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/><site name="tip" pos="0.3 0 0"/>
      </body>
    </body>
    <body name="other" pos="0 0.3 0"><joint name="twin" axis="0 1 0" range="-2 2"/>
      <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02"/>
    </body>
  </worldbody>
  <equality>
    <joint joint1="twin" joint2="elbow" polycoef="0 0.5 0 0 0"/>
    <connect body1="other" anchor="0.2 0 0"/>
  </equality>
  <keyframe><key qpos="0.1 0.4 -0.3"/></keyframe>
</mujoco>
"""
)

ARM_TASKS: list[dict[str, Any]] = [
    {"name": "hand", "type": "frame", "params": {"frame": "hand", "frame_type": "body"}},
    {"name": "relative", "type": "relative_frame", "params": {"frame": "ee", "root": "link2"}},
    {"name": "com", "type": "com", "params": {"cost": [1, 1, 0]}},
    {"name": "look", "type": "look_at", "params": {"frame": "wrist_cam", "axis": [0, 0, -1]}},
    {"name": "align", "type": "axis_align", "params": {"frame": "ee"}},
    {"name": "off", "type": "frame", "enabled": False, "params": {"frame": "ee"}},
    {"name": "frozen", "type": "dof_freezing", "params": {"joints": ["joint7"]}},
    {"name": "posture", "type": "posture", "params": {"cost": 0.1}, "target": {"keyframe": "home"}},
    {"name": "damping", "type": "damping", "params": {"cost": 0.01}},
    {"name": "energy", "type": "kinetic_energy", "params": {"cost": 1e-5}},
]
COUPLED_TASKS: list[dict[str, Any]] = [
    {"name": "tip", "type": "frame", "params": {"frame": "tip"}},
    {"name": "equalities", "type": "equality", "params": {"cost": 1.0}},
    {"name": "posture", "type": "posture", "params": {"cost": 0.1}},
]


def _session(model: mujoco.MjModel, robot: str, tasks: list[dict[str, Any]]) -> Session:
    q = model.key_qpos[0].tolist() if model.nkey else model.qpos0.tolist()
    spec = SessionSpec.model_validate(
        {"robot": robot, "q": q, "tasks": tasks, "limits": [{"type": "configuration"}]}
    )
    return Session(robot, spec, model, robot)


def _same_errors(compiled: SessionState, reference: SessionState) -> None:
    assert list(compiled.errors) == list(reference.errors)  # names, in stack order
    for name, value in compiled.errors.items():
        expected = reference.errors[name]
        assert (value is None) == (expected is None), name
        if value is not None and expected is not None:
            assert math.isclose(value, expected, rel_tol=0.0, abs_tol=TOLERANCE), name


@contextmanager
def no_python_errors() -> Iterator[None]:
    """Fail if a step asks the tasks for their errors (the compiled path must not)."""

    def forbidden(*arguments: object) -> None:
        raise AssertionError("task_errors was called on the compiled path")

    original = step_module.task_errors
    step_module.task_errors = forbidden  # type: ignore[assignment]
    try:
        yield
    finally:
        step_module.task_errors = original


def _step_both(compiled: Session, reference: Session) -> tuple[SessionState, SessionState]:
    with posekit.using_engine("compiled"), no_python_errors():
        first = compiled.step()
    with posekit.using_engine("python"):
        second = reference.step()
    assert first.status == second.status
    np.testing.assert_allclose(first.q, second.q, rtol=0.0, atol=TOLERANCE)
    _same_errors(first, second)
    return first, second


def _drive(
    model: mujoco.MjModel, robot: str, tasks: list[dict[str, Any]], moves: dict
) -> list[SessionState]:
    """Step a session on each engine side by side, changing targets and costs midway;
    the compiled session's states."""
    sessions = _session(model, robot, tasks), _session(model, robot, tasks)
    states = []
    running = 0
    for step in range(40):
        if step in (0, 15):
            for session in sessions:
                for name, change in moves.items():
                    if "target" in change and step == 0:
                        session.set_target(name, change["target"])
                    if "patch" in change and step == 15:
                        session.patch_task(name, change["patch"])
        state, _ = _step_both(*sessions)
        states.append(state)
        running += state.status == "running"
    assert running >= 3  # the errors were compared while q moved
    return states


def test_arm_errors_are_the_python_paths() -> None:
    hand = _session(ARM, "arm7", ARM_TASKS).task("hand").target
    assert hand is not None
    moves = {
        "hand": {
            "target": {"position": np.add(hand.position, [0.05, -0.05, 0.05]).tolist()},
            "patch": {"position_cost": 2.0, "gain": 0.5},
        },
        "com": {"target": {"position": [0.05, 0.02, 0.3]}},
        "look": {"target": {"position": [0.6, 0.3, 0.1]}},
        "posture": {"patch": {"cost": 0.5}},
    }
    _drive(ARM, "arm7", ARM_TASKS, moves)
    state = _session(ARM, "arm7", ARM_TASKS).step()
    assert state.errors["off"] is None and state.errors["energy"] is None
    assert state.errors["frozen"] == 0.0 and state.errors["damping"] == 0.0


def test_equality_errors_are_the_python_paths() -> None:
    tip = _session(COUPLED, "coupled", COUPLED_TASKS).task("tip").target
    assert tip is not None
    moves = {
        "tip": {
            "target": {"position": np.add(tip.position, [0.05, 0.05, -0.05]).tolist()},
            "patch": {"orientation_cost": 0.5},
        }
    }
    states = _drive(COUPLED, "coupled", COUPLED_TASKS, moves)
    assert (states[0].errors["equalities"] or 0.0) > 1e-3  # the keyframe breaks both


class DoubledFrameTask(posekit.FrameTask):
    """A user-defined subclass: the compiled path does not cover it."""

    def compute_error(self, configuration: posekit.Configuration) -> np.ndarray:
        return 2.0 * super().compute_error(configuration)


def test_an_uncovered_task_falls_back_to_its_compute_error() -> None:
    configuration = posekit.Configuration(ARM, ARM.key_qpos[0])
    custom = DoubledFrameTask("ee", "site", 1.0, 1.0)
    custom.set_target(
        posekit.SE3.from_translation(np.array([0.05, 0.0, 0.0]))
        @ configuration.get_transform_frame_to_world("ee", "site")
    )
    posture = posekit.PostureTask(ARM, 1e-2)
    posture.set_target_from_configuration(configuration)
    energy = posekit.KineticEnergyRegularizationTask(1e-5)
    energy.set_dt(1 / 60)
    plan = Plan(
        objectives=[custom, energy, posture],
        constraints=[],
        limits=[],
        error_tasks=[("custom", custom), ("posture", posture)],
        silent=["energy", "off"],
        names=["custom", "energy", "off", "posture"],
    )
    settings = SolverSettings()
    assert error_norms(configuration, plan.objectives, settings.step_dt, limits=[]) is None
    forget_warnings()  # warned once per reason and process
    with pytest.warns(posekit.CompiledFallbackWarning, match="DoubledFrameTask"):
        outcome = solve_step(plan, configuration, settings)
    assert outcome.status == "running"
    assert outcome.errors == task_errors(plan, configuration)
    assert list(outcome.errors) == plan.names
    custom_error = outcome.errors["custom"]
    assert custom_error is not None and custom_error > 0.0
    assert outcome.errors["energy"] is None and outcome.errors["off"] is None


def test_a_position_only_task_reports_the_error_it_weighs() -> None:
    """A frame task that weighs no orientation falls short by the position part of its
    error (the twist's linear part, [m]), not by an orientation error it does not try to
    reduce; on both engines."""
    tasks = [
        {"name": "tip", "type": "frame", "params": {"frame": "ee", "orientation_cost": 0.0}},
        {"name": "posture", "type": "posture", "params": {"cost": 1e-3}},
    ]
    target = {"position": [2.0, 0.0, 0.5], "wxyz": [0.0, 1.0, 0.0, 0.0]}  # out of reach
    for engine in ("compiled", "python"):
        session = _session(ARM, "arm7", tasks)
        session.set_target("tip", target)
        with posekit.using_engine(engine):
            for _ in range(400):
                state = session.step()
                if state.status == "converged":
                    break
        assert state.status == "converged"  # parked short of it
        reference = posekit.FrameTask("ee", "site", position_cost=1.0, orientation_cost=0.0)
        reference.set_target(
            posekit.SE3.from_rotation_and_translation(
                posekit.SO3(np.array(target["wxyz"])), np.array(target["position"])
            )
        )
        error = reference.compute_error(posekit.Configuration(ARM, np.array(state.q)))
        assert state.errors["tip"] == pytest.approx(np.linalg.norm(error[:3]), rel=1e-9), engine
        assert np.linalg.norm(error[3:]) > 0.1  # what the full norm would have added


def test_a_state_names_the_limits_that_bind_and_their_joints() -> None:
    """A posture target beyond every joint's range drives the joints to their ends: the
    states name the configuration limit and those joints; a slow velocity limit binds
    from the first step; at home nothing binds."""
    from posekit.robots import RobotRegistry
    from posekit.sessions import Session, SessionSpec

    model = RobotRegistry(menagerie=False).model("arm7")
    home = model.key_qpos[0].tolist()
    spec = SessionSpec.model_validate(
        {
            "robot": "arm7",
            "q": home,
            "tasks": [
                {"name": "ee", "type": "frame", "params": {"frame": "ee"}},
                {"name": "posture", "type": "posture", "params": {"cost": 1.0}},
            ],
            "limits": [{"name": "range", "type": "configuration"}],
        }
    )
    session = Session("b", spec, model, "arm7")
    assert session.step().limits == {}  # at home, nothing binds
    session.patch_task("ee", {"enabled": False})
    session.set_target("posture", {"q": [10.0] * model.nq})
    states = [session.step() for _ in range(300)]
    limited = {model.joint(j).name for j in range(model.njnt) if model.jnt_limited[j]}
    assert set(states[-1].limits.get("range", [])) == limited
    slow = spec.model_dump()
    slow["limits"].append(
        {"name": "slow", "type": "velocity", "params": {"velocities": {"joint1": 0.01}}}
    )
    moving = Session("v", SessionSpec.model_validate(slow), model, "arm7")
    moving.set_target("ee", {"position": [0.2, 0.4, 0.4]})
    assert moving.step().limits.get("slow") == ["joint1"]
