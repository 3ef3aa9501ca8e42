"""Configuration and velocity limits: rows, bounds, validation, and long rollouts."""

from __future__ import annotations

import mujoco
import numpy as np
import posekit
import pytest
from posekit.ik.limits.limit import bounds_as_rows
from support.models import builtin_model, menagerie_model, random_configuration

ARM = builtin_model("arm7")
BALL_XML = """
<mujoco><compiler angle="radian"/><worldbody>
  <body name="base"><freejoint name="root"/><geom size="0.1"/>
    <body name="link" pos="0 0 0.3"><joint name="ball" type="ball" range="0 0.8"/>
      <geom type="capsule" fromto="0 0 0 0 0 0.3" size="0.03"/>
      <body name="tip" pos="0 0 0.3"><joint name="slide" type="slide" range="-0.1 0.1"/>
        <geom size="0.02"/><site name="tip"/></body>
    </body>
  </body>
</worldbody></mujoco>
"""


def test_configuration_limit_rows_and_bounds_agree() -> None:
    configuration = posekit.Configuration(ARM)
    configuration.update_from_keyframe("home")
    limit = posekit.ConfigurationLimit(ARM, gain=0.5)
    G, h = limit.compute_qp_inequalities(configuration, 0.01)
    n = len(limit.indices)
    np.testing.assert_array_equal(G, np.vstack((limit.projection_matrix, -limit.projection_matrix)))
    q = configuration.q[ARM.jnt_qposadr[: ARM.njnt]]
    np.testing.assert_allclose(h[:n], 0.5 * (ARM.jnt_range[:, 1] - q))
    np.testing.assert_allclose(h[n:], 0.5 * (q - ARM.jnt_range[:, 0]))
    bounds, rows = limit.compute_qp_bounds_and_rows(configuration, 0.01)
    assert rows.inactive
    G2, h2 = bounds_as_rows(bounds)
    np.testing.assert_array_equal(G2, G)
    np.testing.assert_array_equal(h2, h)


def test_min_distance_shrinks_the_range() -> None:
    configuration = posekit.Configuration(ARM)
    configuration.update_from_keyframe("home")
    plain = posekit.ConfigurationLimit(ARM, gain=1.0).compute_qp_inequalities(configuration, 0.01)
    shrunk = posekit.ConfigurationLimit(ARM, gain=1.0, min_distance_from_limits=0.1)
    np.testing.assert_allclose(shrunk.compute_qp_inequalities(configuration, 0.01).h, plain.h - 0.1)


def test_ball_joint_row_is_the_first_order_angle_change() -> None:
    model = mujoco.MjModel.from_xml_string(BALL_XML)
    configuration = posekit.Configuration(model)
    rng = np.random.default_rng(3)
    q = random_configuration(model, rng)
    configuration.update(q)
    limit = posekit.ConfigurationLimit(model, gain=1.0)
    _, rows = limit.compute_qp_bounds_and_rows(configuration, 0.01)
    assert rows.G.shape == (1, model.nv)
    adr = model.jnt_qposadr[1]

    def angle(qpos: np.ndarray) -> float:
        quat = qpos[adr : adr + 4]
        return 2 * np.arctan2(np.linalg.norm(quat[1:]), abs(quat[0]))

    np.testing.assert_allclose(rows.h[0], 0.8 - angle(q))
    step = rng.normal(size=model.nv) * 1e-6
    moved = q.copy()
    mujoco.mj_integratePos(model, moved, step, 1.0)
    np.testing.assert_allclose(angle(moved) - angle(q), rows.G[0] @ step, rtol=1e-3, atol=1e-11)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"gain": 0.0}, "gain"),
        ({"gain": 1.5}, "gain"),
        ({"min_distance_from_limits": float("inf")}, "finite"),
        ({"min_distance_from_limits": "1"}, "number"),
    ],
)
def test_configuration_limit_validation(kwargs: dict, message: str) -> None:
    with pytest.raises(posekit.LimitDefinitionError, match=message):
        posekit.ConfigurationLimit(ARM, **kwargs)


def test_velocity_limit_bounds() -> None:
    model = mujoco.MjModel.from_xml_string(BALL_XML)
    configuration = posekit.Configuration(model)
    limit = posekit.VelocityLimit(model, {"ball": [1.0, 2.0, 3.0], "slide": 0.5})
    G, h = limit.compute_qp_inequalities(configuration, 0.1)
    np.testing.assert_array_equal(limit.indices, [6, 7, 8, 9])
    np.testing.assert_allclose(h, 0.1 * np.array([1, 2, 3, 0.5, 1, 2, 3, 0.5]))
    assert G.shape == (8, model.nv)


@pytest.mark.parametrize(
    ("velocities", "message"),
    [
        ({"root": 1.0}, "Free joint root is not supported"),
        ({"root": 1.0}, "FreeJointVelocityLimit"),
        ({"slide": -1.0}, "> 0"),
        ({"ball": [1.0, 2.0]}, r"\(3,\)"),
        ({"slide": float("nan")}, "finite"),
    ],
)
def test_velocity_limit_validation(velocities: dict, message: str) -> None:
    model = mujoco.MjModel.from_xml_string(BALL_XML)
    with pytest.raises(posekit.LimitDefinitionError, match=message):
        posekit.VelocityLimit(model, velocities)


def test_unknown_joints_are_key_errors() -> None:
    model = mujoco.MjModel.from_xml_string(BALL_XML)
    for make in (
        lambda: posekit.VelocityLimit(model, {"nope": 1.0}),
        lambda: posekit.FreeJointVelocityLimit(model, 1.0, joint_name="nope"),
    ):
        with pytest.raises(KeyError, match="joint 'nope' does not exist in the model") as caught:
            make()
        assert isinstance(caught.value, posekit.InvalidJoint)


def test_free_joint_velocity_limit_bounds_the_base_frame_speeds() -> None:
    model = mujoco.MjModel.from_xml_string(BALL_XML)
    configuration = posekit.Configuration(model)
    q = configuration.q
    rotation = posekit.SO3.from_rpy_radians(0.4, -0.3, 1.1)
    q[3:7] = rotation.wxyz
    configuration.update(q)
    limit = posekit.FreeJointVelocityLimit(model, [1.0, 2.0, 3.0], 4.0)
    assert limit.base_body_id == model.body("base").id
    np.testing.assert_array_equal(limit.linear_max, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(limit.angular_max, [4.0, 4.0, 4.0])
    dt = 0.5
    G, h = limit.compute_qp_inequalities(configuration, dt)
    R = rotation.as_matrix()
    expected = np.zeros((12, model.nv))
    expected[0:3, 0:3], expected[3:6, 3:6] = R.T, np.eye(3)
    expected[6:9, 0:3], expected[9:12, 3:6] = -R.T, -np.eye(3)
    np.testing.assert_allclose(G, expected, atol=1e-12)
    np.testing.assert_allclose(h, dt * np.array([1, 2, 3, 4, 4, 4] * 2))
    # The split form (angular simple bounds, linear rows) has the same feasible set.
    bounds, rows = limit.compute_qp_bounds_and_rows(configuration, dt)
    np.testing.assert_allclose(bounds.upper[3:6], 2.0)
    assert np.all(np.isinf(bounds.upper[:3])) and np.all(np.isinf(bounds.upper[6:]))
    np.testing.assert_allclose(rows.G, expected[[0, 1, 2, 6, 7, 8]], atol=1e-12)
    # Only the linear part: no simple bounds at all.
    linear_only = posekit.FreeJointVelocityLimit(model, max_linear_velocity=2.0)
    assert linear_only.angular_max is None
    bounds, rows = linear_only.compute_qp_bounds_and_rows(configuration, dt)
    assert bounds is None and rows.G.shape == (6, model.nv)
    with pytest.raises(posekit.LimitDefinitionError, match="At least one of"):
        posekit.FreeJointVelocityLimit(model)  # it would bound nothing


def test_free_joint_velocity_limit_holds_while_chasing_a_far_target() -> None:
    model = mujoco.MjModel.from_xml_string(BALL_XML)
    configuration = posekit.Configuration(model)
    q = configuration.q
    q[3:7] = posekit.SO3.from_rpy_radians(0.3, 0.2, 0.9).wxyz
    configuration.update(q)
    task = posekit.FrameTask("base", "body", position_cost=1.0, orientation_cost=1.0)
    task.set_target(
        posekit.SE3.from_rotation_and_translation(
            posekit.SO3.from_z_radians(2.5), np.array([5.0, -3.0, 2.0])
        )
    )
    v_max, w_max = np.array([0.3, 0.5, 0.7]), np.array([0.2, 0.4, 0.6])
    limit = posekit.FreeJointVelocityLimit(model, v_max, w_max, joint_name="root")
    dt = 0.02
    saturated = 0
    for _ in range(200):
        velocity = posekit.solve_ik(configuration, [task], dt, "daqp", limits=[limit])
        R = configuration.get_transform_frame_to_world("base", "body").rotation().as_matrix()
        linear_in_base = R.T @ velocity[:3]
        assert np.all(np.abs(linear_in_base) <= v_max + 1e-9), linear_in_base
        assert np.all(np.abs(velocity[3:6]) <= w_max + 1e-9), velocity[3:6]
        saturated += bool(np.any(np.isclose(np.abs(linear_in_base), v_max)))
        configuration.integrate_inplace(velocity, dt)
    assert saturated > 100  # the target is far: the bound was active most of the time


def test_free_joint_velocity_limit_validation() -> None:
    model = mujoco.MjModel.from_xml_string(BALL_XML)
    with pytest.raises(posekit.LimitDefinitionError, match="not a free joint"):
        posekit.FreeJointVelocityLimit(model, 1.0, joint_name="ball")
    with pytest.raises(posekit.LimitDefinitionError, match="Model has no free joint"):
        posekit.FreeJointVelocityLimit(ARM, 1.0)
    with pytest.raises(posekit.LimitDefinitionError, match="max_angular_velocity"):
        posekit.FreeJointVelocityLimit(model, 1.0, [1.0, -1.0, 1.0])
    with pytest.raises(posekit.LimitDefinitionError, match="max_linear_velocity"):
        posekit.FreeJointVelocityLimit(model, [1.0, 2.0])


def _rollout_toward_unreachable(
    model: mujoco.MjModel, site: str, keyframe: str, reaches_a_limit: bool = True
) -> None:
    configuration = posekit.Configuration(model)
    configuration.update_from_keyframe(keyframe)
    task = posekit.FrameTask(site, "site", position_cost=1.0, orientation_cost=1.0)
    far = posekit.SE3.from_translation(np.array([3.0, -2.0, 2.5]))
    task.set_target(far @ configuration.get_transform_frame_to_world(site, "site"))
    speeds = {model.joint(j).name: 1.5 for j in range(model.njnt)}
    limits = [posekit.ConfigurationLimit(model), posekit.VelocityLimit(model, speeds)]
    dt = 0.01
    lower, upper = model.jnt_range[:, 0], model.jnt_range[:, 1]
    for _ in range(400):
        velocity = posekit.solve_ik(configuration, [task], dt, "daqp", limits=limits)
        assert np.all(np.abs(velocity) <= 1.5 + 1e-6)
        configuration.integrate_inplace(velocity, dt)
        q = configuration.q[model.jnt_qposadr]
        assert np.all(q >= lower - 1e-6) and np.all(q <= upper + 1e-6)
    if not reaches_a_limit:  # ±2π joints: the arm stretches out before any joint limit
        return
    # It pressed against at least one limit rather than wandering elsewhere.
    q = configuration.q[model.jnt_qposadr]
    assert np.min(np.minimum(q - lower, upper - q)) < 1e-2


def test_limits_hold_over_long_rollout_builtin_arm() -> None:
    _rollout_toward_unreachable(ARM, "ee", "home")


def test_limits_hold_over_long_rollout_ur5e() -> None:
    model = menagerie_model("universal_robots_ur5e")
    _rollout_toward_unreachable(model, "attachment_site", "home", reaches_a_limit=False)


def _ball_rollout(ball_speed: float) -> tuple[float, float, np.ndarray]:
    """Largest slide excursion, largest ball angle and the per-step angle excess."""
    model = mujoco.MjModel.from_xml_string(BALL_XML)
    configuration = posekit.Configuration(model)
    task = posekit.FrameTask("tip", "site", position_cost=1.0, orientation_cost=0.1)
    task.set_target(posekit.SE3.from_translation(np.array([2.0, 1.0, -1.0])))
    freeze = posekit.DofFreezingTask(model, dof_indices=list(range(6)))
    speeds = {"ball": ball_speed, "slide": 0.5}
    limits = [posekit.ConfigurationLimit(model), posekit.VelocityLimit(model, speeds)]
    ball_adr, slide_adr = model.joint("ball").qposadr[0], model.joint("slide").qposadr[0]
    dt, largest_slide, excess = 0.01, 0.0, []
    for _ in range(600):
        velocity = posekit.solve_ik(
            configuration, [task], dt, "daqp", limits=limits, constraints=[freeze]
        )
        assert np.all(np.abs(velocity[6:9]) <= ball_speed + 1e-6)
        assert abs(velocity[9]) <= 0.5 + 1e-6
        np.testing.assert_allclose(velocity[:6], 0.0, atol=1e-7)
        configuration.integrate_inplace(velocity, dt)
        slide = abs(configuration.q[slide_adr])
        assert slide <= 0.1 + 1e-6  # scalar joints: exact
        largest_slide = max(largest_slide, slide)
        quat = configuration.q[ball_adr : ball_adr + 4]
        excess.append(2 * np.arctan2(np.linalg.norm(quat[1:]), abs(quat[0])) - 0.8)
    return largest_slide, 0.8 + max(excess), np.array(excess)


def test_ball_and_slide_limits_hold_over_long_rollout() -> None:
    """The base is frozen; the tip chases a far target through a limited ball joint.

    The ball row bounds the first-order change of the rotation angle (as upstream and
    DESIGN §4), so while the joint slides along its limit at angular step |Δω| the
    angle sits past the limit by a second-order amount, O(|Δω|²): bounded, not
    accumulating, and four times the speed gives about sixteen times the excess.
    """
    largest_slide, largest_angle, excess = _ball_rollout(ball_speed=2.0)
    assert largest_slide > 0.1 - 1e-3 and largest_angle > 0.8 - 1e-3  # both limits reached
    assert excess.max() < 1e-3  # |Δω| = 0.02 rad per step: under 0.06°
    assert excess[-100:].max() <= excess.max()  # no drift: the rows pull it back
    _, _, slow_excess = _ball_rollout(ball_speed=0.5)
    assert 0.0 < slow_excess.max() < excess.max() / 8  # second order in the step size


def test_floating_base_humanoid_limits_hold_over_long_rollout() -> None:
    model = builtin_model("humanoid")
    configuration = posekit.Configuration(model)
    configuration.update_from_keyframe("stand")
    hands = []
    for site, offset in (("left_hand", [1.5, 2.0, 1.0]), ("right_hand", [1.5, -2.0, -1.0])):
        task = posekit.FrameTask(site, "site", position_cost=1.0, orientation_cost=0.0)
        task.set_target(posekit.SE3.from_translation(np.array(offset)))
        hands.append(task)
    pelvis = posekit.FrameTask("pelvis", "body", position_cost=10.0, orientation_cost=10.0)
    pelvis.set_target_from_configuration(configuration)
    speeds = {
        model.joint(j).name: 2.0
        for j in range(model.njnt)
        if model.jnt_type[j] != mujoco.mjtJoint.mjJNT_FREE
    }
    limits = [
        posekit.ConfigurationLimit(model),
        posekit.VelocityLimit(model, speeds),
        posekit.FreeJointVelocityLimit(model, 0.2, 0.5),
    ]
    limited = model.jnt_limited.astype(bool)
    adr = model.jnt_qposadr[limited]
    lower, upper = model.jnt_range[limited, 0], model.jnt_range[limited, 1]
    dt, touched = 0.01, 0
    for _ in range(400):
        velocity = posekit.solve_ik(configuration, [*hands, pelvis], dt, "daqp", limits=limits)
        assert np.all(np.abs(velocity[6:]) <= 2.0 + 1e-6)
        configuration.integrate_inplace(velocity, dt)
        q = configuration.q[adr]
        assert np.all(q >= lower - 1e-6) and np.all(q <= upper + 1e-6)
        touched = max(touched, int(np.sum(np.minimum(q - lower, upper - q) < 1e-3)))
    assert touched >= 2  # several joints were pressed against their limits
