"""Every engine exception path: the right class, under one base, naming the bad value."""

from __future__ import annotations

import mujoco
import numpy as np
import posekit
import pytest
from conftest import builtin_model
from posekit import SE3

ARM = builtin_model("arm7")
EQUALITY_XML = """
<mujoco><compiler angle="radian"/><worldbody>
  <body><joint name="a" range="-1 1"/><geom size="0.1" mass="1"/></body>
  <body pos="1 0 0"><joint name="b" range="-1 1"/><geom size="0.1" mass="1"/></body>
</worldbody>
<equality><joint name="couple" joint1="a" joint2="b"/>
  <joint name="off" joint1="b" joint2="a" active="false"/></equality>
</mujoco>
"""


def _configuration() -> posekit.Configuration:
    configuration = posekit.Configuration(ARM)
    configuration.update_from_keyframe("home")
    return configuration


def test_every_exception_shares_the_base_class() -> None:
    names = [
        "InvalidFrame", "UnsupportedFrame", "InvalidKeyframe", "InvalidTarget", "InvalidGain",
        "InvalidDamping", "TargetNotSet", "TaskDefinitionError", "LimitDefinitionError",
        "InvalidConstraint", "NotWithinConfigurationLimits", "NoSolutionFound",
        "IntegrationTimestepNotSet", "InvalidMocapBody",
    ]  # fmt: skip
    for name in names:
        assert issubclass(getattr(posekit, name), posekit.PosekitError), name
    assert posekit.MinkError is posekit.PosekitError


@pytest.mark.parametrize(
    ("make", "error", "fragment"),
    [
        (lambda: posekit.FrameTask("ee", "site", 1.0, 1.0, gain=1.5), posekit.InvalidGain, "1.5"),
        (lambda: posekit.ComTask(1.0, gain=-0.1), posekit.InvalidGain, "-0.1"),
        (
            lambda: posekit.FrameTask("ee", "site", 1.0, 1.0, lm_damping=-1),
            posekit.InvalidDamping,
            "-1",
        ),
        (
            lambda: posekit.FrameTask("ee", "site", [1.0, 2.0], 1.0),
            posekit.TaskDefinitionError,
            "position_cost",
        ),
        (lambda: posekit.FrameTask("ee", "site", -1.0, 1.0), posekit.TaskDefinitionError, ">= 0"),
        (lambda: posekit.ComTask(float("nan")), posekit.TaskDefinitionError, "finite"),
        (lambda: posekit.PostureTask(ARM, np.ones(3)), posekit.TaskDefinitionError, "(7,)"),
        (
            lambda: posekit.LookAtTask("ee", "site", axis=(0, 0, 0)),
            posekit.TaskDefinitionError,
            "non-zero",
        ),
        (
            lambda: posekit.LookAtTask("ee", "site", cost=[1.0, 2.0]),
            posekit.TaskDefinitionError,
            "cost",
        ),
        (lambda: posekit.DampingTask(ARM, "x"), posekit.TaskDefinitionError, "numeric"),
        (lambda: posekit.DofFreezingTask(ARM, [7]), posekit.TaskDefinitionError, "out of range"),
        (lambda: posekit.DofFreezingTask(ARM, [1, 1]), posekit.TaskDefinitionError, "duplicates"),
        (lambda: posekit.DofFreezingTask(ARM, []), posekit.TaskDefinitionError, "at least one"),
        (
            lambda: posekit.KineticEnergyRegularizationTask(-1.0),
            posekit.TaskDefinitionError,
            ">= 0",
        ),
        (lambda: posekit.FrameTask("ee", "camera", 1.0, 1.0), posekit.UnsupportedFrame, "camera"),
        (
            lambda: posekit.EqualityConstraintTask(ARM, 1.0),
            posekit.TaskDefinitionError,
            "no equality",
        ),
    ],
)
def test_bad_task_parameters(make: object, error: type, fragment: str) -> None:
    with pytest.raises(error, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        make()  # type: ignore[operator]


def test_equality_constraint_errors_name_the_equality() -> None:
    model = mujoco.MjModel.from_xml_string(EQUALITY_XML)
    with pytest.raises(posekit.InvalidConstraint, match=r"'nope'.*couple"):
        posekit.EqualityConstraintTask(model, 1.0, equalities=["nope"])
    with pytest.raises(posekit.InvalidConstraint, match="'off' is not active"):
        posekit.EqualityConstraintTask(model, 1.0, equalities=["off"])
    with pytest.raises(posekit.TaskDefinitionError, match="cost"):
        posekit.EqualityConstraintTask(model, [1.0, 2.0], equalities=["couple"])


@pytest.mark.parametrize(
    ("set_target", "fragment"),
    [
        (lambda: posekit.FrameTask("ee", "site", 1, 1).set_target(np.zeros(7)), "must be an SE3"),
        (
            lambda: posekit.FrameTask("ee", "site", 1, 1).set_target(SE3(np.full(7, np.nan))),
            "finite",
        ),
        (
            lambda: posekit.FrameTask("ee", "site", 1, 1).set_target(SE3(np.zeros(7))),
            "zero quaternion",
        ),
        (lambda: posekit.ComTask(1.0).set_target([1.0, 2.0]), r"\(3,\)"),
        (lambda: posekit.LookAtTask("ee", "site").set_target([0, np.inf, 0]), "finite"),
        (lambda: posekit.AxisAlignTask("ee", "site").set_target([0, 0, 0]), "non-zero"),
        (lambda: posekit.PostureTask(ARM, 1.0).set_target(np.zeros(6)), r"\(7,\)"),
    ],
)
def test_bad_targets(set_target: object, fragment: str) -> None:
    with pytest.raises(posekit.InvalidTarget, match=fragment):
        set_target()  # type: ignore[operator]


@pytest.mark.parametrize(
    "task",
    [
        posekit.FrameTask("ee", "site", 1.0, 1.0),
        posekit.RelativeFrameTask("ee", "site", "base", "body", 1.0, 1.0),
        posekit.ComTask(1.0),
        posekit.LookAtTask("wrist_cam", "site"),
        posekit.AxisAlignTask("ee", "site"),
        posekit.PostureTask(ARM, 1.0),
    ],
)
def test_targets_must_be_set_first(task: posekit.Task) -> None:
    with pytest.raises(posekit.TargetNotSet, match="set_target"):
        task.compute_error(_configuration())
    with pytest.raises(posekit.TargetNotSet):
        posekit.solve_ik(_configuration(), [task], 0.01, "daqp")


def test_kinetic_energy_needs_the_timestep() -> None:
    task = posekit.KineticEnergyRegularizationTask(1e-3)
    with pytest.raises(posekit.IntegrationTimestepNotSet, match="set_dt"):
        task.compute_qp_objective(_configuration())
    with pytest.raises(posekit.TaskDefinitionError, match="> 0"):
        task.set_dt(0.0)
    task.set_dt(0.01)
    assert task.compute_qp_objective(_configuration()).H.shape == (ARM.nv, ARM.nv)


def test_unknown_frames_list_the_valid_names() -> None:
    task = posekit.FrameTask("nope", "site", 1.0, 1.0)
    task.set_target(SE3.identity())
    with pytest.raises(posekit.InvalidFrame, match=r"'nope'.*ee"):
        task.compute_error(_configuration())


def test_failures_leave_the_task_unchanged() -> None:
    task = posekit.FrameTask("ee", "site", 1.0, 1.0)
    target = SE3.from_translation(np.array([0.1, 0.2, 0.3]))
    task.set_target(target)
    with pytest.raises(posekit.InvalidTarget):
        task.set_target(SE3(np.full(7, np.nan)))
    with pytest.raises(posekit.TaskDefinitionError):
        task.set_position_cost([1.0, -2.0, 3.0])
    np.testing.assert_array_equal(task.transform_target_to_world.wxyz_xyz, target.wxyz_xyz)
    np.testing.assert_array_equal(task.cost, np.ones(6))
