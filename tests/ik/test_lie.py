"""Lie group axioms, round trips and Jacobians of SO3 and SE3."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from posekit import SE3, SO3, InvalidMocapBody, MatrixLieGroup

GROUPS: list[type[MatrixLieGroup]] = [SO3, SE3]
EPS = 1e-6


def _samples(group: type[MatrixLieGroup], count: int = 20) -> list[MatrixLieGroup]:
    rng = np.random.default_rng(7)
    return [group.sample_uniform(rng) for _ in range(count)]


def _tangent(
    group: type[MatrixLieGroup], rng: np.random.Generator, scale: float = 1.0
) -> np.ndarray:
    return rng.normal(size=group.tangent_dim) * scale


@pytest.mark.parametrize("group", GROUPS)
def test_identity_inverse_and_associativity(group: type[MatrixLieGroup]) -> None:
    a, b, c = _samples(group, 3)
    identity = group.identity()
    np.testing.assert_allclose((a @ identity).as_matrix(), a.as_matrix(), atol=1e-12)
    np.testing.assert_allclose((a @ a.inverse()).as_matrix(), np.eye(group.matrix_dim), atol=1e-12)
    np.testing.assert_allclose(((a @ b) @ c).as_matrix(), (a @ (b @ c)).as_matrix(), atol=1e-12)
    np.testing.assert_allclose((a @ b).as_matrix(), a.as_matrix() @ b.as_matrix(), atol=1e-12)


@pytest.mark.parametrize("group", GROUPS)
def test_exp_log_round_trips(group: type[MatrixLieGroup]) -> None:
    rng = np.random.default_rng(1)
    for element in _samples(group):
        np.testing.assert_allclose(
            group.exp(element.log()).as_matrix(), element.as_matrix(), atol=1e-10
        )
    for scale in (1e-9, 1e-4, 1e-2, 1.0):
        tangent = _tangent(group, rng, scale)
        if np.linalg.norm(tangent[-3:]) < np.pi:
            np.testing.assert_allclose(group.exp(tangent).log(), tangent, atol=1e-12, rtol=1e-9)


@pytest.mark.parametrize("group", GROUPS)
def test_matrix_round_trip_and_apply(group: type[MatrixLieGroup]) -> None:
    point = np.array([0.3, -0.2, 0.5])
    for element in _samples(group, 5):
        np.testing.assert_allclose(
            group.from_matrix(element.as_matrix()).as_matrix(), element.as_matrix(), atol=1e-12
        )
        matrix = element.as_matrix()
        expected = matrix[:3, :3] @ point + (matrix[:3, 3] if group is SE3 else 0.0)
        np.testing.assert_allclose(element.apply(point), expected, atol=1e-12)


@pytest.mark.parametrize("group", GROUPS)
def test_adjoint_moves_tangents_across(group: type[MatrixLieGroup]) -> None:
    rng = np.random.default_rng(2)
    for element in _samples(group, 5):
        tangent = _tangent(group, rng, 0.3)
        left = element @ group.exp(tangent)
        right = group.exp(element.adjoint() @ tangent) @ element
        np.testing.assert_allclose(left.as_matrix(), right.as_matrix(), atol=1e-10)


@pytest.mark.parametrize("group", GROUPS)
def test_plus_minus_are_inverse(group: type[MatrixLieGroup]) -> None:
    rng = np.random.default_rng(3)
    a, b = _samples(group, 2)
    tangent = _tangent(group, rng, 0.4)
    np.testing.assert_allclose(a.rplus(tangent).rminus(a), tangent, atol=1e-10)
    np.testing.assert_allclose(a.lplus(tangent).lminus(a), tangent, atol=1e-10)
    np.testing.assert_allclose(a.plus(b.minus(a)).as_matrix(), b.as_matrix(), atol=1e-10)


@pytest.mark.parametrize("group", GROUPS)
def test_jacobians_match_first_order_perturbations(group: type[MatrixLieGroup]) -> None:
    rng = np.random.default_rng(4)
    for _ in range(5):
        tangent = _tangent(group, rng, 0.8)
        left = np.zeros((group.tangent_dim, group.tangent_dim))
        right = np.zeros_like(left)
        for i in range(group.tangent_dim):
            delta = np.zeros(group.tangent_dim)
            delta[i] = EPS
            plus, minus = group.exp(tangent + delta), group.exp(tangent - delta)
            left[:, i] = (plus @ group.exp(tangent).inverse()).log() / EPS
            left[:, i] -= (minus @ group.exp(tangent).inverse()).log() / EPS
            right[:, i] = (group.exp(tangent).inverse() @ plus).log() / EPS
            right[:, i] -= (group.exp(tangent).inverse() @ minus).log() / EPS
        np.testing.assert_allclose(group.ljac(tangent), left / 2, atol=1e-6)
        np.testing.assert_allclose(group.rjac(tangent), right / 2, atol=1e-6)
        np.testing.assert_allclose(
            group.ljacinv(tangent) @ group.ljac(tangent), np.eye(len(tangent)), atol=1e-10
        )
        np.testing.assert_allclose(
            group.rjacinv(tangent) @ group.rjac(tangent), np.eye(len(tangent)), atol=1e-10
        )


@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("angle", [1e-7, 1e-3, 0.5, 2.0, 3.0])
def test_jlog_is_the_derivative_of_log(group: type[MatrixLieGroup], angle: float) -> None:
    rng = np.random.default_rng(5)
    tangent = _tangent(group, rng)
    tangent[-3:] *= angle / np.linalg.norm(tangent[-3:])
    element = group.exp(tangent)
    numeric = np.zeros((group.tangent_dim, group.tangent_dim))
    for i in range(group.tangent_dim):
        delta = np.zeros(group.tangent_dim)
        delta[i] = EPS
        numeric[:, i] = (element.rplus(delta).log() - element.rplus(-delta).log()) / (2 * EPS)
    np.testing.assert_allclose(element.jlog(), numeric, atol=2e-6)


@pytest.mark.parametrize("group", GROUPS)
def test_interpolate(group: type[MatrixLieGroup]) -> None:
    a, b = _samples(group, 2)
    np.testing.assert_allclose(a.interpolate(b, 0.0).as_matrix(), a.as_matrix(), atol=1e-10)
    np.testing.assert_allclose(a.interpolate(b, 1.0).as_matrix(), b.as_matrix(), atol=1e-10)
    middle = a.interpolate(b)
    np.testing.assert_allclose(
        np.linalg.norm(middle.rminus(a)), np.linalg.norm(b.rminus(middle)), atol=1e-9
    )
    with pytest.raises(ValueError, match="alpha"):
        a.interpolate(b, 1.5)


def test_rpy_round_trip_and_axis_constructors() -> None:
    rotation = SO3.from_rpy_radians(0.3, -0.4, 1.2)
    assert rotation.as_rpy_radians() == pytest.approx((0.3, -0.4, 1.2))
    expected = (
        SO3.from_z_radians(1.2).as_matrix()
        @ SO3.from_y_radians(-0.4).as_matrix()
        @ SO3.from_x_radians(0.3).as_matrix()
    )
    np.testing.assert_allclose(rotation.as_matrix(), expected, atol=1e-12)
    clamped = rotation.clamp(yaw_radians=(-1.0, 1.0))
    assert clamped.as_rpy_radians() == pytest.approx((0.3, -0.4, 1.0))


def test_se3_parts_and_clamp() -> None:
    rotation = SO3.from_x_radians(0.5)
    pose = SE3.from_rotation_and_translation(rotation, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(pose.translation(), [1.0, 2.0, 3.0])
    assert pose.rotation() == rotation
    assert SE3.from_translation(np.ones(3)).rotation() == SO3.identity()
    np.testing.assert_array_equal(SE3.from_rotation(rotation).translation(), np.zeros(3))
    clamped = pose.clamp(x_translation=(0.0, 0.5), roll_radians=(-0.1, 0.1))
    np.testing.assert_allclose(clamped.translation(), [0.5, 2.0, 3.0])
    assert clamped.rotation().compute_roll_radians() == pytest.approx(0.1)


def test_log_takes_the_short_way_for_both_quaternion_signs() -> None:
    rotation = SO3.from_z_radians(0.7)
    flipped = SO3(-rotation.wxyz)
    np.testing.assert_allclose(flipped.log(), rotation.log(), atol=1e-12)


def test_mocap_constructors() -> None:
    model = mujoco.MjModel.from_xml_string(
        '<mujoco><worldbody><body name="target" mocap="true" pos="1 2 3"/>'
        '<body name="plain"><freejoint/><geom size="0.1"/></body></worldbody></mujoco>'
    )
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    np.testing.assert_allclose(SE3.from_mocap_name(model, data, "target").translation(), [1, 2, 3])
    np.testing.assert_allclose(SE3.from_mocap_id(data, 0).translation(), [1, 2, 3])
    with pytest.raises(InvalidMocapBody, match=r"'plain' is not a mocap body.*target"):
        SE3.from_mocap_name(model, data, "plain")
    with pytest.raises(InvalidMocapBody, match="#3"):
        SE3.from_mocap_id(data, 3)


@pytest.mark.parametrize(("group", "size"), [(SO3, 4), (SE3, 7)])
def test_wrong_parameter_shapes_are_rejected(group: type[MatrixLieGroup], size: int) -> None:
    with pytest.raises(ValueError, match=f"shape \\({size},\\)"):
        group(np.zeros(size + 1))
    with pytest.raises(ValueError, match="tangent"):
        group.exp(np.zeros(group.tangent_dim + 1))


def _skew(v: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def _small_adjoint(group: type[MatrixLieGroup], tangent: np.ndarray) -> np.ndarray:
    """The matrix ad(τ) of the Lie bracket: [θ]x for SO3, [[θ]x [ρ]x; 0 [θ]x] for SE3."""
    if group is SO3:
        return _skew(tangent)
    ad = np.zeros((6, 6))
    ad[:3, :3] = ad[3:, 3:] = _skew(tangent[3:])
    ad[:3, 3:] = _skew(tangent[:3])
    return ad


def _left_jacobian_series(ad: np.ndarray, terms: int = 60) -> np.ndarray:
    r""":math:`J_l(\tau) = \sum_k \mathrm{ad}_\tau^k / (k+1)!`, summed term by term."""
    total, term, factorial = np.zeros_like(ad), np.eye(len(ad)), 1.0
    for k in range(terms):
        factorial *= k + 1
        total += term / factorial
        term = term @ ad
    return total


@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize(
    "angle", [0.0, 1e-9, 1e-6, 1e-4, 9.9e-4, 1.01e-3, 5e-3, 9.9e-3, 1.01e-2, 0.3, 1.5, 3.0]
)
def test_jacobians_match_their_power_series_at_every_angle(
    group: type[MatrixLieGroup], angle: float
) -> None:
    """Closed forms and small-angle expansions both agree with the defining series."""
    rng = np.random.default_rng(6)
    for _ in range(3):
        tangent = _tangent(group, rng)
        rotation = tangent[-3:]
        tangent[-3:] = rotation * (angle / np.linalg.norm(rotation))
        ad = _small_adjoint(group, tangent)
        left, right = _left_jacobian_series(ad), _left_jacobian_series(-ad)
        eye = np.eye(group.tangent_dim)
        np.testing.assert_allclose(group.ljac(tangent), left, atol=1e-11)
        np.testing.assert_allclose(group.rjac(tangent), right, atol=1e-11)
        np.testing.assert_allclose(group.ljacinv(tangent) @ left, eye, atol=1e-11)
        np.testing.assert_allclose(group.rjacinv(tangent) @ right, eye, atol=1e-11)
        assert np.all(np.isfinite(group.ljacinv(tangent)))


@pytest.mark.parametrize("group", GROUPS)
def test_matmul_composes_elements_and_applies_to_points(group: type[MatrixLieGroup]) -> None:
    a, b = _samples(group, 2)
    point = np.array([0.3, -0.2, 0.5])
    np.testing.assert_allclose((a @ b).as_matrix(), a.multiply(b).as_matrix(), atol=1e-15)
    np.testing.assert_allclose(a @ point, a.apply(point), atol=1e-15)
    other = SE3 if group is SO3 else SO3
    with pytest.raises(TypeError, match=f"right operand must be an {group.__name__}"):
        a @ other.identity()  # type: ignore[operator]
    with pytest.raises(TypeError, match=r"point array of shape \(3,\)"):
        a @ [0.3, -0.2, 0.5]  # type: ignore[operator]
