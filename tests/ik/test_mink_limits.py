"""Limits as mink 1.3.0 defines them: shapes, overrides, ball joints, empty limits.

Compared with mink where it is installed (the ``mink`` fixture), and with numbers
derived by hand (a ball joint's angle and its derivative) otherwise.
"""

from __future__ import annotations

from types import ModuleType

import mujoco
import numpy as np
import posekit
import pytest
from inline_models import TINY_XML
from support.models import builtin_model, menagerie_model, needs_menagerie, random_configuration

ARM = builtin_model("arm7")
TINY = mujoco.MjModel.from_xml_string(TINY_XML)
BALL_AND_HINGE = mujoco.MjModel.from_xml_string(
    """<mujoco><compiler angle="radian"/><worldbody>
    <body name="cup"><joint name="ball" type="ball" range="0 0.8"/><geom size="0.1"/>
      <body name="arm" pos="0.3 0 0"><joint name="hinge" axis="0 0 1" range="-1 1"/>
        <geom size="0.05"/><site name="tip" pos="0.2 0 0"/></body></body>
    </worldbody></mujoco>"""
)
NOTHING_LIMITED = mujoco.MjModel.from_xml_string(
    """<mujoco><worldbody><body><joint name="spin"/><geom size="0.1"/>
    <body pos="0 0 0.3"><joint name="roll" type="ball"/><geom size="0.1"/></body>
    </body></worldbody></mujoco>"""
)
DT = 0.01


def _pair(mink: ModuleType, model: mujoco.MjModel, q: np.ndarray) -> tuple:
    ours = posekit.Configuration(model, q)
    theirs = mink.Configuration(model, q)
    return ours, theirs


def _angle(wxyz: np.ndarray) -> float:
    return float(2 * np.arctan2(np.linalg.norm(wxyz[1:]), abs(wxyz[0])))


def _ball_quaternion(angle: float, axis: np.ndarray) -> np.ndarray:
    axis = axis / np.linalg.norm(axis)
    return np.concatenate(([np.cos(angle / 2)], np.sin(angle / 2) * axis))


# ------------------------------------------------------- ConfigurationLimit shapes
@pytest.mark.parametrize("model", [TINY, BALL_AND_HINGE, ARM], ids=["tiny", "ball+hinge", "arm"])
def test_limits_have_one_entry_per_qpos_coordinate(model: mujoco.MjModel, mink: ModuleType) -> None:
    for margin in (0.0, 0.05, -0.1):
        ours = posekit.ConfigurationLimit(model, min_distance_from_limits=margin)
        theirs = mink.ConfigurationLimit(model, min_distance_from_limits=margin)
        assert ours.lower.shape == ours.upper.shape == (model.nq,)
        np.testing.assert_array_equal(ours.lower, theirs.lower)
        np.testing.assert_array_equal(ours.upper, theirs.upper)
        np.testing.assert_array_equal(ours.indices, theirs.indices)
        np.testing.assert_array_equal(ours.projection_matrix, theirs.projection_matrix)


@needs_menagerie
def test_g1_limits_are_indexed_by_qpos_address(mink: ModuleType) -> None:
    model = menagerie_model("g1")
    ours, theirs = posekit.ConfigurationLimit(model), mink.ConfigurationLimit(model)
    assert ours.lower.shape == (model.nq,)  # 44 on G1 (one per qpos coordinate)
    np.testing.assert_array_equal(ours.lower, theirs.lower)
    np.testing.assert_array_equal(ours.upper, theirs.upper)
    knee = model.joint("left_knee_joint")
    assert ours.upper[knee.qposadr[0]] == knee.range[1]
    assert np.all(ours.upper[:7] == mujoco.mjMAXVAL)  # the free joint is not limited


def test_padding_and_hand_derived_entries() -> None:
    limit = posekit.ConfigurationLimit(TINY, min_distance_from_limits=0.05)
    slide, elbow = TINY.joint("slide"), TINY.joint("elbow")
    assert limit.lower[slide.qposadr[0]] == pytest.approx(-0.1 + 0.05)
    assert limit.upper[elbow.qposadr[0]] == pytest.approx(2.0 - 0.05)
    ball = TINY.joint("ball").qposadr[0]
    assert np.all(limit.lower[ball : ball + 4] == -mujoco.mjMAXVAL)  # balls: by angle, not box
    assert np.all(limit.upper[:7] == mujoco.mjMAXVAL)


# ------------------------------------------------------------- overrides
def _random_q(model: mujoco.MjModel, seed: int) -> np.ndarray:
    return random_configuration(model, np.random.default_rng(seed))


def test_limits_assigned_after_construction_change_the_inequalities(mink: ModuleType) -> None:
    """The repulsion example of issue 15: both limits pinned at the current q."""
    q = ARM.key_qpos[0].copy()
    ours, theirs = posekit.ConfigurationLimit(ARM), mink.ConfigurationLimit(ARM)
    for limit in (ours, theirs):
        limit.lower[:] = q  # in place
        limit.upper = q.copy()  # a new array
    configuration_ours, configuration_theirs = _pair(mink, ARM, q)
    G, h = ours.compute_qp_inequalities(configuration_ours, DT)
    G_ref, h_ref = theirs.compute_qp_inequalities(configuration_theirs, DT)
    np.testing.assert_array_equal(G, G_ref)
    np.testing.assert_array_equal(h, h_ref)
    assert np.max(np.abs(h)) < 1e-12  # nothing may move (1.71 before the fix)
    # The fast path (simple bounds to daqp) honours them too: the arm cannot move.
    posture = posekit.PostureTask(ARM, cost=1.0)
    posture.set_target(ARM.qpos0)
    velocity = posekit.solve_ik(configuration_ours, [posture], DT, "daqp", limits=[ours])
    assert np.max(np.abs(velocity)) < 1e-6


def test_one_limit_moved_after_construction(mink: ModuleType) -> None:
    q = _random_q(TINY, 3)
    elbow = TINY.joint("elbow").qposadr[0]
    ours, theirs = posekit.ConfigurationLimit(TINY), mink.ConfigurationLimit(TINY)
    for limit in (ours, theirs):
        limit.upper[elbow] = q[elbow] + 0.01
        limit.gain = 0.5
    configuration_ours, configuration_theirs = _pair(mink, TINY, q)
    G, h = ours.compute_qp_inequalities(configuration_ours, DT)
    G_ref, h_ref = theirs.compute_qp_inequalities(configuration_theirs, DT)
    np.testing.assert_allclose(G, G_ref, rtol=0, atol=1e-15)
    np.testing.assert_allclose(h, h_ref, rtol=0, atol=1e-15)
    bounds, _ = ours.compute_qp_bounds_and_rows(configuration_ours, DT)
    assert bounds is not None
    assert bounds.upper[TINY.joint("elbow").dofadr[0]] == pytest.approx(0.5 * 0.01)


# --------------------------------------------------------- nothing limited
def test_projection_matrix_is_none_when_nothing_is_limited(mink: ModuleType) -> None:
    for make in (
        lambda lib: lib.ConfigurationLimit(NOTHING_LIMITED),
        lambda lib: lib.VelocityLimit(NOTHING_LIMITED),
        lambda lib: lib.VelocityLimit(NOTHING_LIMITED, {}),
    ):
        ours, theirs = make(posekit), make(mink)
        assert ours.projection_matrix is None and theirs.projection_matrix is None
        configuration = posekit.Configuration(NOTHING_LIMITED)
        assert ours.compute_qp_inequalities(configuration, DT).inactive
        assert ours.compute_qp_bounds_and_rows(configuration, DT)[0] is None
    limit = posekit.ConfigurationLimit(NOTHING_LIMITED)
    assert limit.lower.shape == (NOTHING_LIMITED.nq,) and np.all(limit.lower == -mujoco.mjMAXVAL)


# ------------------------------------------------------------- ball joints
def test_ball_joint_row_by_hand() -> None:
    r"""One row :math:`n^T \Delta\omega \le \gamma(\theta_{\max} - \theta)` per limited ball."""
    model = BALL_AND_HINGE
    axis = np.array([1.0, -2.0, 0.5]) / np.linalg.norm([1.0, -2.0, 0.5])
    q = np.zeros(model.nq)
    q[:4] = _ball_quaternion(0.3, axis)
    configuration = posekit.Configuration(model, q)
    limit = posekit.ConfigurationLimit(model, gain=0.5, min_distance_from_limits=0.1)
    G, h = limit.compute_qp_inequalities(configuration, DT)
    assert G.shape == (3, model.nv)  # hinge upper, hinge lower, ball
    np.testing.assert_allclose(G[2, :3], axis, atol=1e-12)
    assert np.all(G[2, 3:] == 0.0)
    assert h[2] == pytest.approx(0.5 * (0.8 - 0.1 - 0.3), abs=1e-12)
    # The same rotation as -q (w < 0) has the same row.
    q[:4] *= -1.0
    configuration.update(q)
    G_neg, h_neg = limit.compute_qp_inequalities(configuration, DT)
    np.testing.assert_allclose(G_neg, G, atol=1e-12)
    np.testing.assert_allclose(h_neg, h, atol=1e-12)


def test_ball_joint_row_is_the_derivative_of_the_angle() -> None:
    """Central differences of the angle along each ball DoF give the row."""
    model = BALL_AND_HINGE
    limit = posekit.ConfigurationLimit(model)
    rng = np.random.default_rng(5)
    for angle in (1e-3, 0.2, 0.79, 2.5):
        q = np.zeros(model.nq)
        q[:4] = _ball_quaternion(angle, rng.normal(size=3))
        configuration = posekit.Configuration(model, q)
        row = limit.compute_qp_inequalities(configuration, DT).G[-1, :3]
        eps = 1e-6 * angle
        for k in range(3):
            step = np.zeros(model.nv)
            step[k] = eps
            ahead, behind = configuration.integrate(step, 1.0), configuration.integrate(-step, 1.0)
            change = _angle(ahead[:4]) - _angle(behind[:4])
            assert change / (2 * eps) == pytest.approx(row[k], abs=1e-6)


def test_ball_rows_match_mink(mink: ModuleType) -> None:
    rng = np.random.default_rng(11)
    for model in (TINY, BALL_AND_HINGE):
        ours, theirs = posekit.ConfigurationLimit(model), mink.ConfigurationLimit(model)
        for trial in range(20):
            q = random_configuration(model, rng)
            if trial == 0:  # the identity: a zero row, h = gain * max angle
                q[model.joint("ball").qposadr[0] :][:4] = [1.0, 0.0, 0.0, 0.0]
            configuration_ours, configuration_theirs = _pair(mink, model, q)
            G, h = ours.compute_qp_inequalities(configuration_ours, DT)
            G_ref, h_ref = theirs.compute_qp_inequalities(configuration_theirs, DT)
            assert G.shape == G_ref.shape  # 3 rows for ball + hinge (2 before the fix)
            np.testing.assert_allclose(G, G_ref, rtol=0, atol=1e-12)
            np.testing.assert_allclose(h, h_ref, rtol=0, atol=1e-12)


def test_lone_ball_joint_at_identity_has_a_zero_row(mink: ModuleType) -> None:
    model = mujoco.MjModel.from_xml_string(
        '<mujoco><compiler angle="radian"/><worldbody><body>'
        '<joint type="ball" range="0 1"/><geom size="0.1"/>'
        "</body></worldbody></mujoco>"
    )
    configuration = posekit.Configuration(model)
    G, h = posekit.ConfigurationLimit(model, gain=0.9).compute_qp_inequalities(configuration, DT)
    assert G is not None and G.shape == (1, 3) and np.all(G == 0.0)
    assert h == pytest.approx([0.9])
    G_ref, h_ref = mink.ConfigurationLimit(model, gain=0.9).compute_qp_inequalities(
        mink.Configuration(model), DT
    )
    np.testing.assert_array_equal(G, G_ref)
    np.testing.assert_allclose(h, h_ref)


def test_ball_margin_larger_than_the_range_is_an_error() -> None:
    with pytest.raises(posekit.LimitDefinitionError, match=r"'ball' has range 1\.5"):
        posekit.ConfigurationLimit(TINY, min_distance_from_limits=1.5)
    posekit.ConfigurationLimit(TINY, min_distance_from_limits=1.49)


def test_ball_joint_limit_holds_while_chasing_a_target_beyond_it() -> None:
    model = BALL_AND_HINGE
    configuration = posekit.Configuration(model)
    task = posekit.FrameTask("tip", "site", position_cost=1.0, orientation_cost=0.0)
    task.set_target(posekit.SE3.from_translation(np.array([-0.3, 0.3, 0.2])))
    limits = [
        posekit.ConfigurationLimit(model),
        posekit.VelocityLimit(model, {"ball": [2.0, 2.0, 2.0]}),
    ]
    angles = []
    for _ in range(300):
        velocity = posekit.solve_ik(configuration, [task], DT, "daqp", limits=limits)
        configuration.integrate_inplace(velocity, DT)
        wxyz = configuration.q[:4]
        angles.append(2 * np.arctan2(np.linalg.norm(wxyz[1:]), abs(wxyz[0])))
    assert max(angles) <= 0.8 + 1e-3  # the range, up to the first-order row's overshoot
    assert angles[-1] > 0.8 - 0.02  # and the joint went to it: the target is beyond


# ---------------------------------------------------- fast path = rows path
@pytest.mark.parametrize("model", [TINY, BALL_AND_HINGE], ids=["tiny", "ball+hinge"])
def test_simple_bounds_and_rows_give_the_same_step(model: mujoco.MjModel, mink: ModuleType) -> None:
    rng = np.random.default_rng(2)
    for _ in range(10):
        q = random_configuration(model, rng)
        target = random_configuration(model, rng)
        steps = {}
        for name, lib, solver in (
            ("daqp bounds", posekit, "daqp"),
            ("quadprog rows", posekit, "quadprog"),
            ("mink", mink, "daqp"),
        ):
            configuration = lib.Configuration(model, q)
            posture = lib.PostureTask(model, cost=1.0)
            posture.set_target(target)
            damping = lib.DampingTask(model, cost=1e-2)
            limits = [lib.ConfigurationLimit(model, gain=0.5)]
            steps[name] = lib.solve_ik(configuration, [posture, damping], DT, solver, limits=limits)
        np.testing.assert_allclose(steps["daqp bounds"], steps["quadprog rows"], atol=1e-7)
        np.testing.assert_allclose(steps["daqp bounds"], steps["mink"], atol=1e-9)


# ----------------------------------------------------- free-joint velocity limit
def test_free_joint_limit_needs_at_least_one_bound() -> None:
    with pytest.raises(posekit.LimitDefinitionError, match="At least one of max_linear"):
        posekit.FreeJointVelocityLimit(TINY)
    assert posekit.FreeJointVelocityLimit(TINY, max_angular_velocity=1.0).linear_max is None
