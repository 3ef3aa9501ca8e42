"""Configuration: state, frames, Jacobians against finite differences, limits, errors."""

from __future__ import annotations

import logging

import mujoco
import numpy as np
import posekit
import pytest
from posekit.ik.configuration import InvalidConfigurationVector
from support.models import builtin_model, menagerie_model, random_configuration

ARM = builtin_model("arm7")


@pytest.fixture
def arm() -> posekit.Configuration:
    configuration = posekit.Configuration(ARM)
    configuration.update_from_keyframe("home")
    return configuration


def test_q_is_a_copy_and_dimensions(arm: posekit.Configuration) -> None:
    q = arm.q
    q[0] += 1.0
    assert arm.q[0] != q[0]
    assert (arm.nq, arm.nv) == (ARM.nq, ARM.nv)


def test_default_q_is_qpos0() -> None:
    np.testing.assert_array_equal(posekit.Configuration(ARM).q, ARM.qpos0)


@pytest.mark.parametrize(
    ("q", "message"),
    [
        (np.zeros(3), r"shape \(7,\)"),
        (np.full(7, np.nan), "finite"),
        (["a"] * 7, "numeric"),
    ],
)
def test_update_rejects_bad_vectors(arm: posekit.Configuration, q: object, message: str) -> None:
    before = arm.q
    with pytest.raises(InvalidConfigurationVector, match=message):
        arm.update(q)
    np.testing.assert_array_equal(arm.q, before)


def test_unknown_keyframe_lists_valid_ones(arm: posekit.Configuration) -> None:
    with pytest.raises(posekit.InvalidKeyframe, match=r"Keyframe nope does not exist.*'home'"):
        arm.update_from_keyframe("nope")


def test_frame_errors_name_the_problem(arm: posekit.Configuration) -> None:
    with pytest.raises(posekit.UnsupportedFrame, match="joint is not supported"):
        arm.get_frame_jacobian("ee", "joint")
    with pytest.raises(posekit.InvalidFrame, match=r"site 'nope' does not exist.*'ee'"):
        arm.get_transform_frame_to_world("nope", "site")
    with pytest.raises(posekit.InvalidFrame, match="out of range"):
        arm.get_frame_jacobian(10_000, "body")


def test_frames_by_id_equal_frames_by_name(arm: posekit.Configuration) -> None:
    site_id = ARM.site("ee").id
    np.testing.assert_array_equal(
        arm.get_frame_jacobian(site_id, "site"), arm.get_frame_jacobian("ee", "site")
    )


def _body_jacobian_fd(
    configuration: posekit.Configuration, frame: str, frame_type: str, eps: float = 1e-6
) -> np.ndarray:
    """Columns log(T(q)^-1 T(q ⊕ ε e_i)) / ε by central differences."""
    model = configuration.model
    q0 = configuration.q
    columns = []
    for i in range(model.nv):
        poses = []
        for sign in (1.0, -1.0):
            q = q0.copy()
            step = np.zeros(model.nv)
            step[i] = sign * eps
            mujoco.mj_integratePos(model, q, step, 1.0)
            configuration.update(q)
            poses.append(configuration.get_transform_frame_to_world(frame, frame_type))
        configuration.update(q0)
        columns.append((poses[1].inverse() @ poses[0]).log() / (2 * eps))
    return np.array(columns).T


@pytest.mark.parametrize("frame_type", ["site", "body", "geom"])
def test_frame_jacobian_matches_finite_differences(frame_type: str) -> None:
    model = builtin_model("humanoid")
    configuration = posekit.Configuration(model)
    rng = np.random.default_rng(0)
    frame = {"site": "left_hand", "body": 3, "geom": model.ngeom - 1}[frame_type]
    for _ in range(3):
        configuration.update(random_configuration(model, rng))
        expected = _body_jacobian_fd(configuration, frame, frame_type)
        np.testing.assert_allclose(
            configuration.get_frame_jacobian(frame, frame_type), expected, atol=1e-6
        )


def test_get_transform_is_relative_pose(arm: posekit.Configuration) -> None:
    world_ee = arm.get_transform_frame_to_world("ee", "site")
    world_cam = arm.get_transform_frame_to_world("wrist_cam", "site")
    relative = arm.get_transform("ee", "site", "wrist_cam", "site")
    np.testing.assert_allclose((world_cam @ relative).as_matrix(), world_ee.as_matrix(), atol=1e-12)


def test_integrate_matches_mujoco_and_inplace_updates_kinematics(
    arm: posekit.Configuration,
) -> None:
    velocity = np.linspace(-0.5, 0.5, ARM.nv)
    expected = arm.q
    mujoco.mj_integratePos(ARM, expected, velocity, 0.1)
    np.testing.assert_allclose(arm.integrate(velocity, 0.1), expected)
    arm.integrate_inplace(velocity, 0.1)
    np.testing.assert_allclose(arm.q, expected)
    reference = mujoco.MjData(ARM)
    reference.qpos[:] = expected
    mujoco.mj_kinematics(ARM, reference)
    np.testing.assert_allclose(arm.data.site_xpos, reference.site_xpos)


def test_integrate_rejects_bad_velocity(arm: posekit.Configuration) -> None:
    with pytest.raises(InvalidConfigurationVector, match="velocity"):
        arm.integrate(np.zeros(2), 0.1)


def test_check_limits(arm: posekit.Configuration, caplog: pytest.LogCaptureFixture) -> None:
    arm.check_limits()
    q = arm.q
    joint = ARM.joint(1)
    q[joint.qposadr[0]] = joint.range[1] + 0.1
    arm.update(q)
    with pytest.raises(posekit.NotWithinConfigurationLimits, match=rf"Joint 1 \({joint.name}\)"):
        arm.check_limits()
    with caplog.at_level(logging.WARNING):
        arm.check_limits(safety_break=False)
    assert joint.name in caplog.text


def test_check_limits_ball_joint_angle() -> None:
    model = mujoco.MjModel.from_xml_string(
        """<mujoco><worldbody><body><joint name="ball" type="ball" range="0 0.5"/>
        <geom size="0.1"/></body></worldbody></mujoco>"""
    )
    configuration = posekit.Configuration(model)
    configuration.check_limits()
    angle = 0.7
    configuration.update(np.array([np.cos(angle / 2), np.sin(angle / 2), 0.0, 0.0]))
    with pytest.raises(posekit.NotWithinConfigurationLimits, match=r"Joint 0 \(ball\)"):
        configuration.check_limits()


def test_inertia_matrix_is_symmetric_positive_definite() -> None:
    model = menagerie_model("universal_robots_ur5e")
    configuration = posekit.Configuration(model)
    inertia = configuration.get_inertia_matrix()
    np.testing.assert_allclose(inertia, inertia.T)
    assert np.all(np.linalg.eigvalsh(inertia) > 0)
    # M maps accelerations to joint forces: compare with MuJoCo's mj_mulM.
    accel = np.linspace(-1, 1, model.nv)
    expected = np.zeros(model.nv)
    mujoco.mj_mulM(model, configuration.data, expected, accel)
    np.testing.assert_allclose(inertia @ accel, expected, atol=1e-12)
