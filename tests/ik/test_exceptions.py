"""Every engine exception path: the right class, under one base, naming the bad value."""

from __future__ import annotations

import mujoco
import numpy as np
import posekit
import pytest
import qpsolvers
from posekit import SE3
from support.models import builtin_model

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
            "FrameTask position cost",
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
        (lambda: posekit.DofFreezingTask(ARM, [1, 1]), posekit.TaskDefinitionError, "Duplicate"),
        (lambda: posekit.DofFreezingTask(ARM, []), posekit.TaskDefinitionError, "at least one DOF"),
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
    with pytest.raises(posekit.InvalidConstraint, match=r"1 is not active.*'off'"):
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


def test_errors_are_also_upstream_and_builtin_classes() -> None:
    """Code that catches what upstream raises keeps catching posekit's errors."""
    with pytest.raises(qpsolvers.SolverNotFound, match="'nosuch' is not installed"):
        posekit.solve_ik(_configuration(), [], 0.01, "nosuch")
    with pytest.raises(posekit.InvalidSolverSettings):
        posekit.solve_ik(_configuration(), [], 0.01, "nosuch")
    geom = ARM.geom(ARM.ngeom - 1).name
    with pytest.raises(posekit.InvalidFrame, match=r"geom 'nope' does not exist.*Nor does a body"):
        posekit.CollisionAvoidanceLimit(ARM, [(["nope"], [geom])])
    with pytest.raises(KeyError, match=r"geom id 999 is out of range"):
        posekit.CollisionAvoidanceLimit(ARM, [([999], [geom])])
    with pytest.raises(ValueError, match=r"q must have shape \(7,\)"):
        _configuration().update(np.zeros(3))
    for name in ("InvalidConfigurationVector", "InvalidGeomPair", "SolverNotInstalled"):
        assert issubclass(getattr(posekit, name), posekit.MinkError), name


@pytest.mark.parametrize(
    ("operation", "error", "fragment"),
    [
        (lambda: posekit.Configuration(ARM).integrate(np.zeros(3), 0.1), ValueError, r"\(7,\)"),
        (lambda: posekit.Configuration(ARM, q=np.ones(2)), ValueError, r"\(7,\)"),
        (lambda: posekit.SE3.identity() @ posekit.SO3.identity(), TypeError, "SE3 @ SO3"),
        (lambda: posekit.SO3(np.zeros(3)), ValueError, r"wxyz must have shape \(4,\)"),
        (lambda: posekit.SE3.from_matrix(np.eye(3)), ValueError, r"\(4, 4\)"),
        (lambda: posekit.SO3.from_matrix(np.eye(4)), ValueError, r"\(3, 3\)"),
        (lambda: posekit.SO3.identity().apply(np.zeros(2)), ValueError, "target"),
        (
            lambda: posekit.SE3.from_rotation_and_translation(posekit.SO3.identity(), [1, 2]),
            ValueError,
            "translation",
        ),
        (
            lambda: posekit.FrameTask("ee", "site", 1, 1).set_orientation_cost([1, 2]),
            posekit.TaskDefinitionError,
            "FrameTask orientation cost",
        ),
        (
            lambda: posekit.RelativeFrameTask("ee", "site", "base", "body", 1, 1).set_target(None),
            posekit.InvalidTarget,
            "transform_target_to_root must be an SE3",
        ),
        (
            lambda: posekit.FrameTask("ee", "site", 1, 1).set_gain(2.0),
            posekit.InvalidGain,
            r"\[0, 1\], got 2.0",
        ),
        (
            lambda: posekit.PostureTask(ARM, 1.0).set_lm_damping(float("inf")),
            posekit.InvalidDamping,
            "inf",
        ),
        (lambda: posekit.DofFreezingTask(ARM, [0.5]), posekit.TaskDefinitionError, "0.5"),
        (lambda: posekit.DofFreezingTask(ARM, 3), posekit.TaskDefinitionError, "sequence"),
        (
            lambda: posekit.KineticEnergyRegularizationTask(1.0).set_dt(float("nan")),
            posekit.TaskDefinitionError,
            "dt",
        ),
        (
            lambda: posekit.EqualityConstraintTask(
                mujoco.MjModel.from_xml_string(EQUALITY_XML), 1.0, equalities=["couple", 0]
            ),
            posekit.TaskDefinitionError,
            r"Duplicate equality constraint IDs provided: \[0, 0\]",
        ),
        (
            lambda: posekit.VelocityLimit(ARM, {"joint1": "fast"}),
            posekit.LimitDefinitionError,
            "numeric",
        ),
        (
            lambda: posekit.ConfigurationLimit(ARM, min_distance_from_limits=float("nan")),
            posekit.LimitDefinitionError,
            "min_distance_from_limits",
        ),
        (
            lambda: posekit.FreeJointVelocityLimit(ARM, joint_name="joint1"),
            posekit.LimitDefinitionError,
            "Joint joint1 is not a free joint",
        ),
    ],
)
def test_more_bad_inputs(operation: object, error: type, fragment: str) -> None:
    with pytest.raises(error, match=fragment):
        operation()  # type: ignore[operator]


FLEX_XML = """
<mujoco><worldbody>
  <flexcomp name="cloth" type="grid" count="3 3 1" spacing="0.1 0.1 0.1" radius="0.01"
    dim="2" mass="0.1"><edge equality="true"/></flexcomp>
</worldbody></mujoco>
"""


@pytest.mark.parametrize(
    ("operation", "error", "fragment"),
    [
        (
            lambda: posekit.Configuration(ARM).get_frame_jacobian(None, "body"),
            posekit.InvalidFrame,
            r"body 'None' does not exist in the model. Available body names",
        ),
        (
            lambda: posekit.CollisionAvoidanceLimit(ARM, [(1.5, [0])]),
            posekit.LimitDefinitionError,
            "1.5 is not a geom name, id, body name or sequence of them",
        ),
        (
            lambda: posekit.KineticEnergyRegularizationTask(True),
            posekit.TaskDefinitionError,
            "cost must be a number, got True",
        ),
        (
            lambda: posekit.KineticEnergyRegularizationTask("x"),
            posekit.TaskDefinitionError,
            "cost must be a number, got 'x'",
        ),
        (
            lambda: posekit.EqualityConstraintTask(
                mujoco.MjModel.from_xml_string(EQUALITY_XML), 1.0, equalities=[]
            ),
            posekit.TaskDefinitionError,
            "at least one",
        ),
        (
            lambda: posekit.EqualityConstraintTask(mujoco.MjModel.from_xml_string(FLEX_XML), 1.0),
            posekit.InvalidConstraint,
            "unsupported type mjEQ_FLEX; supported: connect, weld, joint, tendon",
        ),
        (lambda: posekit.ComTask(1.0).set_target("abc"), posekit.InvalidTarget, "numeric"),
        (lambda: posekit.AxisAlignTask("ee", "site").set_target("up"), posekit.InvalidTarget, "up"),
        (
            lambda: posekit.AxisAlignTask("ee", "site").set_target([0.0, 1.0]),
            posekit.InvalidTarget,
            r"shape \(3,\) but got \(2,\) \(\[0.0, 1.0\]\)",
        ),
        (
            lambda: posekit.LookAtTask("ee", "site", axis="z"),
            posekit.TaskDefinitionError,
            "axis must be numeric",
        ),
        (
            lambda: posekit.SE3.from_mocap_id(mujoco.MjData(ARM), 0),
            posekit.InvalidMocapBody,
            "no mocap body",
        ),
    ],
)
def test_remaining_bad_inputs(operation: object, error: type, fragment: str) -> None:
    with pytest.raises(error, match=fragment):
        operation()  # type: ignore[operator]


def test_a_failing_qpsolvers_backend_raises_no_solution_found() -> None:
    configuration = _configuration()
    limit = posekit.VelocityLimit(ARM, {"joint1": 1.0})
    posture = posekit.PostureTask(ARM, cost=1.0)
    posture.set_target(ARM.qpos0 + 0.5)
    with pytest.raises(posekit.NoSolutionFound, match="quadprog failed to find a solution"):
        posekit.solve_ik(configuration, [], 0.01, "quadprog", limits=[limit], constraints=[posture])
