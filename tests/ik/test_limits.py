"""Configuration and velocity limits: rows, bounds, validation, and long rollouts."""

from __future__ import annotations

import mujoco
import numpy as np
import posekit
import pytest
from conftest import builtin_model, menagerie_model
from posekit.ik.limits.limit import bounds_as_rows
from tests_support import random_configuration

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
    [({"gain": 0.0}, "gain"), ({"gain": 1.5}, "gain"), ({"min_distance_from_limits": -1}, ">= 0")],
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
        ({"nope": 1.0}, "'nope' does not exist"),
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


def test_free_joint_velocity_limit() -> None:
    model = mujoco.MjModel.from_xml_string(BALL_XML)
    configuration = posekit.Configuration(model)
    limit = posekit.FreeJointVelocityLimit(model, max_linear_velocity=2.0)
    bounds, _ = limit.compute_qp_bounds_and_rows(configuration, 0.5)
    np.testing.assert_allclose(bounds.upper[:3], 1.0)
    assert np.all(np.isinf(bounds.upper[3:]))
    with pytest.raises(posekit.LimitDefinitionError, match="not a free joint"):
        posekit.FreeJointVelocityLimit(model, 1.0, joint_name="ball")
    with pytest.raises(posekit.LimitDefinitionError, match="0 free joints"):
        posekit.FreeJointVelocityLimit(ARM, 1.0)


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
