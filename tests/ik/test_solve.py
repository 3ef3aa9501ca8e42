"""solve_ik / build_ik: convergence on real models, QP assembly, solvers, constraints."""

from __future__ import annotations

import itertools

import mujoco
import numpy as np
import posekit
import pytest
import qpsolvers
from conftest import builtin_model, menagerie_model
from posekit.ik.solve import assemble_qp

ARM = builtin_model("arm7")
HUMANOID = builtin_model("humanoid")
DT = 0.01


def _arm(keyframe: str = "home") -> posekit.Configuration:
    configuration = posekit.Configuration(ARM)
    configuration.update_from_keyframe(keyframe)
    return configuration


@pytest.mark.parametrize(
    ("model_name", "site"), [("arm7", "ee"), ("universal_robots_ur5e", "attachment_site")]
)
def test_ten_centimetre_offset_converges_monotonically(model_name: str, site: str) -> None:
    model = ARM if model_name == "arm7" else menagerie_model(model_name)
    configuration = posekit.Configuration(model)
    configuration.update_from_keyframe("home")
    task = posekit.FrameTask(site, "site", position_cost=1.0, orientation_cost=1.0)
    start = configuration.get_transform_frame_to_world(site, "site")
    target = posekit.SE3.from_translation(np.array([0.06, -0.06, 0.05])) @ start
    task.set_target(target)
    norms = [np.linalg.norm(task.compute_error(configuration))]
    for _ in range(20):
        velocity = posekit.solve_ik(configuration, [task], DT, "daqp", damping=1e-6)
        configuration.integrate_inplace(velocity, DT)
        norms.append(np.linalg.norm(task.compute_error(configuration)))
        if norms[-1] < 1e-6:
            break
    assert all(b < a for a, b in itertools.pairwise(norms)), norms
    pose = configuration.get_transform_frame_to_world(site, "site")
    assert np.linalg.norm(pose.translation() - target.translation()) < 1e-3
    angle = np.linalg.norm((target.rotation().inverse() @ pose.rotation()).log())
    assert angle < np.deg2rad(1.0)
    assert len(norms) <= 21


def test_look_at_reaches_under_one_degree() -> None:
    configuration = _arm()
    task = posekit.LookAtTask("wrist_cam", "site", axis=(0.0, 0.0, -1.0), cost=1.0, gain=0.5)
    point = configuration.get_transform_frame_to_world("wrist_cam", "site").translation()
    task.set_target(point + np.array([0.3, 0.3, -0.3]))
    posture = posekit.PostureTask(ARM, cost=1e-3)
    posture.set_target_from_configuration(configuration)
    for _ in range(200):
        velocity = posekit.solve_ik(configuration, [task, posture], DT, "daqp", damping=1e-6)
        configuration.integrate_inplace(velocity, DT)
    pose = configuration.get_transform_frame_to_world("wrist_cam", "site")
    gaze = pose.rotation().apply(np.array([0.0, 0.0, -1.0]))
    to_target = task.target_pos - pose.translation()
    cosine = gaze @ to_target / np.linalg.norm(to_target)
    assert np.degrees(np.arccos(np.clip(cosine, -1, 1))) < 1.0


def test_com_and_posture_converge_on_floating_base() -> None:
    configuration = posekit.Configuration(HUMANOID)
    configuration.update_from_keyframe("stand")
    com = posekit.ComTask(cost=1.0)
    target = configuration.data.subtree_com[1] + np.array([0.03, -0.02, -0.04])
    com.set_target(target)
    posture = posekit.PostureTask(HUMANOID, cost=1e-2)
    posture.set_target_from_configuration(configuration)
    for _ in range(100):
        velocity = posekit.solve_ik(configuration, [com, posture], DT, "daqp", damping=1e-6)
        configuration.integrate_inplace(velocity, DT)
    np.testing.assert_allclose(configuration.data.subtree_com[1], target, atol=1e-4)


def test_posture_converges_to_its_target() -> None:
    configuration = _arm()
    posture = posekit.PostureTask(ARM, cost=1.0, gain=0.5)
    target = ARM.key("home").qpos + 0.2
    posture.set_target(target)
    for _ in range(60):
        velocity = posekit.solve_ik(configuration, [posture], DT, "daqp")
        configuration.integrate_inplace(velocity, DT)
    np.testing.assert_allclose(configuration.q, target, atol=1e-6)


def test_residual_path_and_dense_path_give_the_same_qp() -> None:
    configuration = _arm()
    frame = posekit.FrameTask("ee", "site", position_cost=[1.0, 2.0, 3.0], orientation_cost=0.5)
    frame.set_target(
        posekit.SE3.from_translation(np.array([0.05, 0.0, 0.02]))
        @ configuration.get_transform_frame_to_world("ee", "site")
    )
    frame.lm_damping = 0.3
    posture = posekit.PostureTask(ARM, cost=0.1)
    posture.set_target(ARM.qpos0)
    kinetic = posekit.KineticEnergyRegularizationTask(cost=1e-3)
    kinetic.set_dt(DT)
    tasks = [frame, posture, kinetic]
    damping = 1e-4
    qp = assemble_qp(configuration, tasks, DT, damping, limits=[])
    H = damping * np.eye(ARM.nv)
    c = np.zeros(ARM.nv)
    for task in tasks:
        objective = task.compute_qp_objective(configuration)
        H += objective.H
        c += objective.c
    np.testing.assert_allclose(qp.H, H, atol=1e-12)
    np.testing.assert_allclose(qp.c, c, atol=1e-12)


def test_objective_value_matches_documented_formula() -> None:
    objective = posekit.Objective(np.diag([1.0, 2.0]), np.array([1.0, -1.0]))
    assert objective.value(np.array([1.0, 1.0])) == pytest.approx(3.0)


SOLVERS = ["daqp", "quadprog", "osqp", "proxqp", "clarabel"]
SOLVER_SETTINGS: dict[str, dict] = {
    "osqp": {"eps_abs": 1e-10, "eps_rel": 1e-10, "max_iter": 200_000, "polishing": True},
    "proxqp": {"eps_abs": 1e-10},
    "clarabel": {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10},
}


@pytest.mark.parametrize("solver", SOLVERS)
def test_solvers_agree(solver: str) -> None:
    assert solver in qpsolvers.available_solvers, qpsolvers.available_solvers
    rng = np.random.default_rng(7)
    for trial in range(4):
        configuration = _arm()
        task = posekit.FrameTask("ee", "site", position_cost=1.0, orientation_cost=0.5)
        offset = posekit.SE3.from_translation(rng.uniform(-0.3, 0.3, 3))
        task.set_target(offset @ configuration.get_transform_frame_to_world("ee", "site"))
        posture = posekit.PostureTask(ARM, cost=1e-2)
        posture.set_target(ARM.qpos0)
        speeds = {ARM.joint(j).name: 0.5 + 0.1 * trial for j in range(ARM.njnt)}
        limits = [posekit.ConfigurationLimit(ARM), posekit.VelocityLimit(ARM, speeds)]
        constraints = [posekit.DofFreezingTask(ARM, dof_indices=[trial])] if trial % 2 else None
        reference = posekit.solve_ik(
            configuration,
            [task, posture],
            DT,
            "daqp",
            1e-6,
            limits=limits,
            constraints=constraints,
        )
        velocity = posekit.solve_ik(
            configuration,
            [task, posture],
            DT,
            solver,
            1e-6,
            limits=limits,
            constraints=constraints,
            **SOLVER_SETTINGS.get(solver, {}),
        )
        np.testing.assert_allclose(velocity, reference, atol=1e-4 * max(1, np.abs(reference).max()))


def test_build_ik_problem_solved_by_qpsolvers_equals_solve_ik() -> None:
    configuration = _arm()
    task = posekit.FrameTask("ee", "site", position_cost=1.0, orientation_cost=1.0)
    task.set_target(
        posekit.SE3.from_translation(np.array([0.4, 0.0, 0.0]))
        @ configuration.get_transform_frame_to_world("ee", "site")
    )
    limits = [posekit.VelocityLimit(ARM, {ARM.joint(j).name: 1.0 for j in range(ARM.njnt)})]
    problem = posekit.build_ik(configuration, [task], DT, limits=limits)
    assert isinstance(problem, qpsolvers.Problem)
    solution = qpsolvers.solve_problem(problem, solver="quadprog")
    velocity = posekit.solve_ik(configuration, [task], DT, "daqp", limits=limits)
    np.testing.assert_allclose(solution.x / DT, velocity, atol=1e-8)
    assert np.max(np.abs(velocity)) == pytest.approx(1.0)


def test_limits_none_means_configuration_limit_and_empty_means_none() -> None:
    configuration = _arm()
    assert assemble_qp(configuration, [], DT, limits=None).bounds is not None
    empty = assemble_qp(configuration, [], DT, limits=[])
    assert empty.bounds is None and empty.G is None


def test_hard_constraint_freezes_dofs() -> None:
    configuration = _arm()
    task = posekit.FrameTask("ee", "site", position_cost=1.0, orientation_cost=1.0)
    task.set_target(
        posekit.SE3.from_translation(np.array([0.1, 0.1, 0.1]))
        @ configuration.get_transform_frame_to_world("ee", "site")
    )
    freeze = posekit.DofFreezingTask(ARM, dof_indices=[0, 3])
    velocity = posekit.solve_ik(configuration, [task], DT, "daqp", constraints=[freeze])
    np.testing.assert_allclose(velocity[[0, 3]], 0.0, atol=1e-9)
    assert np.linalg.norm(velocity) > 1e-3


def test_infeasible_problem_raises_no_solution_found() -> None:
    configuration = _arm()
    limit = posekit.VelocityLimit(ARM, {ARM.joint(0).name: 1.0})
    posture = posekit.PostureTask(ARM, cost=1.0)
    posture.set_target(ARM.qpos0 + 0.5)
    # A posture target held as a hard equality needs more speed than the limit allows.
    with pytest.raises(posekit.NoSolutionFound, match="daqp"):
        posekit.solve_ik(configuration, [], DT, "daqp", limits=[limit], constraints=[posture])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dt": 0.0}, "dt"),
        ({"dt": float("nan")}, "dt"),
        ({"damping": -1.0}, "damping"),
        ({"solver": "no-such-solver"}, "not installed"),
    ],
)
def test_bad_solver_settings(kwargs: dict, message: str) -> None:
    arguments = {"dt": DT, "solver": "daqp", "damping": 1e-12} | kwargs
    with pytest.raises(posekit.InvalidSolverSettings, match=message):
        posekit.solve_ik(_arm(), [], **arguments)


def test_safety_break_raises_outside_limits() -> None:
    configuration = _arm()
    q = configuration.q
    q[0] = ARM.jnt_range[0, 1] + 0.2
    configuration.update(q)
    with pytest.raises(posekit.NotWithinConfigurationLimits):
        posekit.solve_ik(configuration, [], DT, "daqp", safety_break=True)
    posekit.solve_ik(configuration, [], DT, "daqp", safety_break=False)


def test_equality_constraints_hold_as_hard_constraints() -> None:
    model = menagerie_model("aloha")
    configuration = posekit.Configuration(model)
    configuration.update_from_keyframe("neutral_pose")
    rng = np.random.default_rng(1)
    q = configuration.q
    q[model.jnt_qposadr[6]] += 0.01  # break the finger coupling
    configuration.update(q)
    equality = posekit.EqualityConstraintTask(model, cost=1.0)
    posture = posekit.PostureTask(model, cost=1e-2)
    posture.set_target(q + rng.uniform(-0.05, 0.05, model.nq))
    for _ in range(5):
        velocity = posekit.solve_ik(configuration, [posture], DT, "daqp", constraints=[equality])
        configuration.integrate_inplace(velocity, DT)
    assert np.linalg.norm(equality.compute_error(configuration)) < 1e-8
    mujoco.mj_forward(model, configuration.data)
