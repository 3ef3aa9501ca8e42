"""daqp's failures on numerically singular Hessians, and the square-root re-solve.

A floating base chasing a far target under a free-joint velocity limit leaves most DoFs
with curvature 1e-12 only; the normal-equations Hessian is then numerically singular
and daqp stalls (see ``posekit.ik.qp_sqrt``). posekit must solve every step mink solves.
"""

from __future__ import annotations

from types import ModuleType

import daqp
import numpy as np
import posekit
import pytest
from posekit.ik.qp_sqrt import HessianTerms, hessian_factor, solve_square_root
from support.models import builtin_model, menagerie_model, needs_menagerie

DT = 0.01
LINEAR_CAP, ANGULAR_CAP = 1.0, 2.0
# daqp's primal tolerance is 1e-6 on the displacement: 1e-4 on the velocity at 100 Hz.
CAP_TOLERANCE = 1e-6 / DT


def _far_target_rollout(lib: ModuleType, steps: int = 200) -> tuple[int, float]:
    """Steps solved before the first failure, and the largest cap excess [m/s, rad/s]."""
    model = menagerie_model("g1")
    configuration = lib.Configuration(model)
    configuration.update_from_keyframe("stand")
    palm = lib.FrameTask("left_palm", "site", position_cost=1.0, orientation_cost=1.0)
    start = configuration.get_transform_frame_to_world("left_palm", "site")
    palm.set_target(lib.SE3.from_translation(np.array([10.0, 0.0, 0.0])) @ start)
    limit = lib.FreeJointVelocityLimit(model, LINEAR_CAP, ANGULAR_CAP)
    excess = 0.0
    for step in range(steps):
        try:
            velocity = lib.solve_ik(configuration, [palm], DT, "daqp", limits=[limit])
        except lib.NoSolutionFound:
            return step, excess
        rotation = configuration.data.xmat[limit.base_body_id].reshape(3, 3)
        linear = np.abs(rotation.T @ velocity[:3]).max() - LINEAR_CAP
        angular = np.abs(velocity[3:6]).max() - ANGULAR_CAP
        excess = max(excess, linear, angular)
        configuration.integrate_inplace(velocity, DT)
    return steps, excess


@needs_menagerie
def test_free_floating_far_target_solves_every_step_mink_solves(mink: ModuleType) -> None:
    solved, excess = _far_target_rollout(posekit)
    reference_solved, _ = _far_target_rollout(mink)
    assert solved == 200  # posekit 0.1 raised NoSolutionFound at step 91
    assert solved >= reference_solved
    assert excess <= CAP_TOLERANCE  # the caps held


def _random_problem(
    rng: np.random.Generator, nv: int = 12
) -> tuple[HessianTerms, np.ndarray, np.ndarray]:
    rows = rng.normal(size=(5, nv))
    weights = rng.uniform(0.1, 1.0, size=nv)
    mass = rng.normal(size=(nv, nv))
    dense = mass @ mass.T + np.eye(nv)
    terms = HessianTerms(rows, 1e-3, [weights], [dense])
    H = rows.T @ rows + np.diag(weights**2 + 1e-3) + dense
    return terms, H, rng.normal(size=nv)


def test_the_factor_is_that_of_the_hessian() -> None:
    terms, H, _ = _random_problem(np.random.default_rng(0))
    R = hessian_factor(terms, H.shape[0])
    assert R is not None
    assert np.allclose(np.triu(R), R)
    np.testing.assert_allclose(R.T @ R, H, rtol=1e-12, atol=1e-10)


def test_a_dof_without_any_curvature_has_no_factor() -> None:
    rows = np.zeros((1, 3))
    rows[0, 0] = 1.0
    assert hessian_factor(HessianTerms(rows, 0.0, [], []), 3) is None


def test_the_square_root_form_solves_the_same_qp() -> None:
    """Bounds, inequalities and equalities: the same minimiser as daqp on (H, c)."""
    rng = np.random.default_rng(4)
    for _ in range(5):
        terms, H, c = _random_problem(rng)
        nv = H.shape[0]
        R = hessian_factor(terms, nv)
        assert R is not None
        upper = np.full(nv, np.inf)
        upper[:4] = 0.05
        G, h = rng.normal(size=(3, nv)), np.array([0.02, np.inf, 0.01])
        A, b = rng.normal(size=(1, nv)), np.array([0.01])
        x, exitflag = solve_square_root(R, c, (-upper, upper), (G, h), (A, b))
        assert exitflag == 1
        finite = np.isfinite(h)
        matrix = np.vstack((G[finite], A))
        direct, _, flag, _ = daqp.solve(
            H, c, matrix, np.concatenate((upper, h[finite], b)),
            np.concatenate((-upper, np.full(2, -np.inf), b)),
            np.array([0] * (nv + 2) + [5], dtype=np.intc),
        )  # fmt: skip
        assert flag == 1
        np.testing.assert_allclose(x, direct, atol=1e-9)
        assert np.all(np.abs(x[:4]) <= 0.05 + 1e-9) and abs(A @ x - b)[0] < 1e-9


def test_infeasible_problems_still_raise() -> None:
    """The re-solve does not hide infeasibility: NoSolutionFound names both attempts."""
    model = builtin_model("arm7")
    configuration = posekit.Configuration(model)
    posture = posekit.PostureTask(model, cost=1.0)
    posture.set_target(model.qpos0 + 1.0)
    limit = posekit.VelocityLimit(model, {"joint1": 0.1})
    with pytest.raises(posekit.NoSolutionFound, match="in square-root form: primal infeasible"):
        posekit.solve_ik(configuration, [], DT, "daqp", limits=[limit], constraints=[posture])
