"""solve_ik / build_ik: convergence on real models, QP assembly, solvers, constraints."""

from __future__ import annotations

import itertools

import mujoco
import numpy as np
import posekit
import proxsuite
import pytest
import qpsolvers
from inline_models import COUPLED_XML, TINY_XML
from posekit.ik.solve import assemble_qp
from support.models import builtin_model, menagerie_model, random_configuration

ARM = builtin_model("arm7")
HUMANOID = builtin_model("humanoid")
DT = 0.01


def _arm(keyframe: str = "home") -> posekit.Configuration:
    configuration = posekit.Configuration(ARM)
    configuration.update_from_keyframe(keyframe)
    return configuration


@pytest.mark.parametrize("gain", [1.0, 0.5])
@pytest.mark.parametrize(
    ("model_name", "site"),
    [
        ("arm7", "ee"),
        ("universal_robots_ur5e", "attachment_site"),
        ("franka_emika_panda", "attachment_site"),
    ],
)
def test_ten_centimetre_offset_converges_monotonically(
    model_name: str, site: str, gain: float
) -> None:
    model = ARM if model_name == "arm7" else menagerie_model(model_name)
    configuration = posekit.Configuration(model)
    configuration.update_from_keyframe("home")
    task = posekit.FrameTask(site, "site", position_cost=1.0, orientation_cost=1.0, gain=gain)
    start = configuration.get_transform_frame_to_world(site, "site")
    offset = np.array([0.06, -0.06, 0.05])
    assert np.linalg.norm(offset) == pytest.approx(0.1, abs=0.002)
    target = posekit.SE3.from_translation(offset) @ start
    task.set_target(target)
    norms = [np.linalg.norm(task.compute_error(configuration))]
    converged_at = None
    for step in range(1, 20):
        velocity = posekit.solve_ik(configuration, [task], DT, "daqp", damping=1e-6)
        configuration.integrate_inplace(velocity, DT)
        norms.append(np.linalg.norm(task.compute_error(configuration)))
        pose = configuration.get_transform_frame_to_world(site, "site")
        distance = np.linalg.norm(pose.translation() - target.translation())
        angle = np.linalg.norm((target.rotation().inverse() @ pose.rotation()).log())
        if converged_at is None and distance < 1e-3 and angle < np.deg2rad(1.0):
            converged_at = step
    assert converged_at is not None and converged_at < 20, norms
    # Strictly decreasing until the error reaches round-off.
    assert all(b < a for a, b in itertools.pairwise(norms) if a > 1e-9), norms
    assert norms[-1] < 1e-6


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
    H, c = _sum_of_dense_objectives(tasks, configuration, damping)
    np.testing.assert_allclose(qp.H, H, atol=1e-12)
    np.testing.assert_allclose(qp.c, c, atol=1e-12)


def _sum_of_dense_objectives(
    tasks: list, configuration: posekit.Configuration, damping: float
) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`(\delta I + \sum H_i, \sum c_i)` from each task's own dense objective."""
    nv = configuration.model.nv
    H, c = damping * np.eye(nv), np.zeros(nv)
    for task in tasks:
        objective = task.compute_qp_objective(configuration)
        H += objective.H
        c += objective.c
    return H, c


def _every_task(model: mujoco.MjModel, configuration: posekit.Configuration) -> list:
    """One task of every kind (equalities when the model has some), LM damping on some."""
    rng = np.random.default_rng(5)
    leaf, middle = model.nbody - 1, max(1, (model.nbody - 1) // 2)
    frame = posekit.FrameTask(leaf, "body", [1.0, 2.0, 3.0], 0.5, gain=0.8, lm_damping=0.3)
    frame.set_target(posekit.SE3.sample_uniform(rng))
    relative = posekit.RelativeFrameTask(leaf, "body", middle, "body", 1.0, 0.2, lm_damping=0.1)
    relative.set_target(posekit.SE3.sample_uniform(rng))
    com = posekit.ComTask([1.0, 0.5, 2.0], gain=0.5, lm_damping=1.0)
    com.set_target(rng.normal(size=3))
    look = posekit.LookAtTask(leaf, "body", axis=(1.0, 0.0, 0.0), cost=0.7, lm_damping=0.2)
    look.set_target(rng.normal(size=3))
    align = posekit.AxisAlignTask(leaf, "body", axis=(0.0, 1.0, 0.0), cost=0.4, gain=0.3)
    align.set_target(rng.normal(size=3))
    posture = posekit.PostureTask(model, rng.uniform(0.1, 1.0, model.nv), lm_damping=0.5)
    posture.set_target(random_configuration(model, rng))
    kinetic = posekit.KineticEnergyRegularizationTask(cost=1e-4)
    kinetic.set_dt(DT)
    tasks = [frame, relative, com, look, align, posture, kinetic]
    tasks.append(posekit.DampingTask(model, rng.uniform(0.1, 1.0, model.nv)))
    tasks.append(posekit.DofFreezingTask(model, [model.nv - 1]))
    if model.neq:
        tasks.append(posekit.EqualityConstraintTask(model, 2.0, gain=0.5, lm_damping=0.1))
    return tasks


@pytest.mark.parametrize("xml", [TINY_XML, COUPLED_XML], ids=["tiny", "coupled"])
def test_fused_residuals_equal_the_sum_of_dense_objectives_for_every_task(xml: str) -> None:
    model = mujoco.MjModel.from_xml_string(xml)
    configuration = posekit.Configuration(
        model, random_configuration(model, np.random.default_rng(2))
    )
    tasks = _every_task(model, configuration)
    damping = 1e-3
    H, c = _sum_of_dense_objectives(tasks, configuration, damping)
    for task in tasks:
        if (
            isinstance(task, posekit.Task)
            and task.cost.shape[0] == task.compute_error(configuration).shape[0]
        ):
            # Independently of the residual path: the documented formulas.
            objective = task.compute_qp_objective(configuration)
            J, e = task.compute_jacobian(configuration), task.compute_error(configuration)
            W, e_w = task.cost[:, None] * J, -task.gain * task.cost * e
            mu = task.lm_damping * e_w @ e_w
            np.testing.assert_allclose(
                objective.H, W.T @ W + mu * np.eye(model.nv), atol=1e-12, err_msg=repr(task)
            )
            np.testing.assert_allclose(objective.c, -W.T @ e_w, atol=1e-12, err_msg=repr(task))
    qp = assemble_qp(configuration, tasks, DT, damping, limits=[])
    np.testing.assert_allclose(qp.H, H, atol=1e-11)
    np.testing.assert_allclose(qp.c, c, atol=1e-11)
    # And the same step: the unconstrained minimiser of the dense objective.
    velocity = posekit.solve_ik(configuration, tasks, DT, "daqp", damping, limits=[])
    np.testing.assert_allclose(velocity * DT, np.linalg.solve(H, -c), atol=1e-9)


def test_objective_value_matches_documented_formula() -> None:
    objective = posekit.Objective(np.diag([1.0, 2.0]), np.array([1.0, -1.0]))
    assert objective.value(np.array([1.0, 1.0])) == pytest.approx(3.0)


SOLVERS = ["daqp", "quadprog", "osqp", "proxqp", "clarabel"]
SOLVER_SETTINGS: dict[str, dict] = {
    "osqp": {"eps_abs": 1e-10, "eps_rel": 1e-10, "max_iter": 200_000, "polishing": True},
    # proxqp's default equality-constrained initial guess reports the (feasible) floating
    # base problem as primal infeasible; started without a guess it solves it.
    "proxqp": {"eps_abs": 1e-10, "initial_guess": proxsuite.proxqp.InitialGuess.NO_INITIAL_GUESS},
    "clarabel": {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10},
}


Problem = tuple[posekit.Configuration, list, list, list | None]


def _arm_problems() -> list[Problem]:
    """arm7 reaching 0.1-0.5 m away in one step: velocity bounds active; DoFs frozen."""
    rng = np.random.default_rng(7)
    problems = []
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
        problems.append((configuration, [task, posture], limits, constraints))
    return problems


def _humanoid_problem() -> Problem:
    """Floating base tilted, pelvis sent far away: free-joint (rotated rows) limits active."""
    configuration = posekit.Configuration(HUMANOID)
    q = HUMANOID.key("stand").qpos.copy()
    q[3:7] = posekit.SO3.from_rpy_radians(0.2, -0.1, 0.7).wxyz
    configuration.update(q)
    pelvis = posekit.FrameTask("pelvis", "body", position_cost=1.0, orientation_cost=1.0)
    pelvis.set_target(
        posekit.SE3.from_translation(np.array([1.0, 0.5, 0.2]))
        @ configuration.get_transform_frame_to_world("pelvis", "body")
    )
    feet = [posekit.FrameTask(f, "site", 10.0, 1.0) for f in ("left_foot", "right_foot")]
    com = posekit.ComTask(cost=1.0)
    posture = posekit.PostureTask(HUMANOID, cost=1e-2)
    tasks = [pelvis, *feet, com, posture, posekit.DampingTask(HUMANOID, 1e-3)]
    for task in tasks[1:5]:
        task.set_target_from_configuration(configuration)
    limits = [
        posekit.ConfigurationLimit(HUMANOID),
        posekit.FreeJointVelocityLimit(HUMANOID, [0.3, 0.4, 0.5], 0.8),
    ]
    return configuration, tasks, limits, None


def _collision_problem() -> Problem:
    """Humanoid hands driven into each other: collision rows active, far pairs at +inf."""
    configuration = posekit.Configuration(HUMANOID)
    configuration.update_from_keyframe("stand")
    hands = ("left_hand", "right_hand")
    middle = 0.5 * sum(
        configuration.get_transform_frame_to_world(h, "site").translation() for h in hands
    )
    tasks = []
    for hand in hands:
        task = posekit.FrameTask(hand, "site", position_cost=1.0, orientation_cost=0.0, gain=0.1)
        task.set_target(posekit.SE3.from_translation(middle))
        tasks.append(task)
    posture = posekit.PostureTask(HUMANOID, cost=1e-2)
    posture.set_target_from_configuration(configuration)
    pelvis = posekit.FrameTask("pelvis", "body", position_cost=10.0, orientation_cost=10.0)
    pelvis.set_target_from_configuration(configuration)
    tasks.extend([posture, pelvis])
    data = configuration.data
    left, right = HUMANOID.geom("left_hand").id, HUMANOID.geom("right_hand").id
    gap = mujoco.mj_geomDistance(HUMANOID, data, left, right, 10.0, None)
    collision = posekit.CollisionAvoidanceLimit(
        HUMANOID,
        [(["left_hand"], ["right_hand"]), (["head"], ["left_foot"])],
        minimum_distance_from_collisions=gap - 0.005,
        collision_detection_distance=gap + 0.05,
    )
    _, h = collision.compute_qp_inequalities(configuration, DT)
    assert np.isfinite(h).any() and np.isinf(h).any()  # rows in and out of range
    limits = [posekit.ConfigurationLimit(HUMANOID), collision]
    return configuration, tasks, limits, None


def _equality_problem() -> Problem:
    """Floating base, ball joint rows, slide: the model's equalities held exactly."""
    model = mujoco.MjModel.from_xml_string(TINY_XML)
    configuration = posekit.Configuration(model)
    configuration.update(random_configuration(model, np.random.default_rng(3)))
    tip = posekit.FrameTask("tip", "site", position_cost=1.0, orientation_cost=0.2)
    tip.set_target(
        posekit.SE3.from_translation(np.array([0.2, -0.1, 0.1]))
        @ configuration.get_transform_frame_to_world("tip", "site")
    )
    posture = posekit.PostureTask(model, cost=1e-2)
    posture.set_target(model.qpos0)
    speeds = {"ball": [1.0, 2.0, 3.0], "slide": 0.5, "elbow": 2.0, "twin": 2.0}
    limits = [posekit.ConfigurationLimit(model), posekit.VelocityLimit(model, speeds)]
    # Gain 0.02: the random start violates the equalities by centimetres, more than the
    # velocity limits allow to close in one step.
    constraints = [posekit.EqualityConstraintTask(model, cost=1.0, gain=0.02)]
    return configuration, [tip, posture], limits, constraints


PROBLEMS = {
    "arm7": _arm_problems,
    "humanoid_free_joint": lambda: [_humanoid_problem()],
    "humanoid_collision": lambda: [_collision_problem()],
    "tiny_equalities": lambda: [_equality_problem()],
}


@pytest.mark.parametrize("problem_name", list(PROBLEMS))
@pytest.mark.parametrize("solver", SOLVERS)
def test_solvers_agree(solver: str, problem_name: str) -> None:
    assert solver in qpsolvers.available_solvers, qpsolvers.available_solvers
    for configuration, tasks, limits, constraints in PROBLEMS[problem_name]():
        arguments = {"limits": limits, "constraints": constraints, "damping": 1e-6}
        reference = posekit.solve_ik(configuration, tasks, DT, "daqp", **arguments)
        velocity = posekit.solve_ik(
            configuration, tasks, DT, solver, **arguments, **SOLVER_SETTINGS.get(solver, {})
        )
        np.testing.assert_allclose(velocity, reference, atol=1e-4 * max(1, np.abs(reference).max()))
        # The problems are built so that some inequality is active at the solution.
        problem = posekit.build_ik(configuration, tasks, DT, limits=limits, constraints=constraints)
        slack = problem.h - problem.G @ (reference * DT)
        assert slack.min() > -1e-9 and slack.min() < 1e-7, slack.min()
        if constraints:
            np.testing.assert_allclose(problem.A @ (reference * DT), problem.b, atol=1e-9)


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
