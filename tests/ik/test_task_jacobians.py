"""Every task's Jacobian against central finite differences of its error.

Perturbations go through ``mj_integratePos`` so that quaternion (ball, free) joints are
perturbed on their manifold, exactly as the IK step integrates.
"""

from __future__ import annotations

from collections.abc import Callable

import mujoco
import numpy as np
import posekit
import pytest
from inline_models import COUPLED_XML, TINY_XML
from posekit import SE3
from support.models import builtin_model, menagerie_model, random_configuration

EPS = 1e-6


def _tiny() -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_string(TINY_XML)


def _coupled() -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_string(COUPLED_XML)


MODELS: dict[str, Callable[[], mujoco.MjModel]] = {
    "tiny": _tiny,
    "coupled": _coupled,
    "arm7": lambda: builtin_model("arm7"),
    "humanoid": lambda: builtin_model("humanoid"),
    "ur5e": lambda: menagerie_model("ur5e"),
    "g1": lambda: menagerie_model("g1"),
    "aloha": lambda: menagerie_model("aloha"),
}


def _leaf_body(model: mujoco.MjModel) -> int:
    return model.nbody - 1


def _frame_target(configuration: posekit.Configuration, body: int, rng: np.random.Generator) -> SE3:
    pose = configuration.get_transform_frame_to_world(body, "body")
    return pose @ SE3.exp(rng.normal(size=6) * 0.3)


def _tasks(
    model: mujoco.MjModel, configuration: posekit.Configuration, rng: np.random.Generator
) -> list:
    leaf = _leaf_body(model)
    middle = max(1, leaf // 2)
    frame = posekit.FrameTask(leaf, "body", position_cost=1.0, orientation_cost=1.0)
    frame.set_target(_frame_target(configuration, leaf, rng))
    relative = posekit.RelativeFrameTask(leaf, "body", middle, "body", 1.0, 1.0)
    relative.set_target(
        configuration.get_transform(leaf, "body", middle, "body")
        @ SE3.exp(rng.normal(size=6) * 0.3)
    )
    geom_frame = posekit.FrameTask(model.ngeom - 1, "geom", 1.0, 0.5)
    geom_frame.set_target(SE3.sample_uniform(rng))
    com = posekit.ComTask(cost=1.0)
    com.set_target(rng.normal(size=3))
    look = posekit.LookAtTask(leaf, "body", axis=rng.normal(size=3), cost=1.0)
    look.set_target(configuration.data.xpos[leaf] + rng.normal(size=3))
    align = posekit.AxisAlignTask(leaf, "body", axis=rng.normal(size=3))
    align.set_target(rng.normal(size=3))
    posture = posekit.PostureTask(model, cost=1.0)
    posture.set_target(random_configuration(model, rng))
    tasks = [frame, relative, geom_frame, com, look, align, posture]
    tasks.append(posekit.DampingTask(model, cost=0.5))
    tasks.append(posekit.DofFreezingTask(model, dof_indices=[0, model.nv - 1]))
    if model.nsite:
        site = posekit.FrameTask(model.nsite - 1, "site", 1.0, 1.0)
        site.set_target(SE3.sample_uniform(rng))
        tasks.append(site)
    active = [i for i in range(model.neq) if model.eq_active0[i]]
    if active:
        tasks.append(posekit.EqualityConstraintTask(model, cost=1.0, equalities=active))
    return tasks


def _numeric_jacobian(
    task: object, configuration: posekit.Configuration, q: np.ndarray
) -> np.ndarray:
    model = configuration.model
    columns = []
    for i in range(model.nv):
        step = np.zeros(model.nv)
        step[i] = EPS
        errors = []
        for sign in (1.0, -1.0):
            perturbed = q.copy()
            mujoco.mj_integratePos(model, perturbed, sign * step, 1.0)
            configuration.update(perturbed)
            errors.append(task.compute_error(configuration))
        columns.append((errors[0] - errors[1]) / (2 * EPS))
    configuration.update(q)
    return np.array(columns).T


def _scalar_dofs(model: mujoco.MjModel) -> np.ndarray:
    scalar = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
    dofs = [d for d in range(model.nv) if int(model.jnt_type[model.dof_jntid[d]]) in scalar]
    return np.array(dofs, dtype=int)


def _check_velocity_selection(model: mujoco.MjModel, task: object, jacobian: np.ndarray) -> None:
    """Damping and freezing have zero error; J selects the DoFs they act on."""
    if isinstance(task, posekit.DofFreezingTask):
        np.testing.assert_array_equal(jacobian, np.eye(model.nv)[task.dof_indices])
        return
    _, free_dofs = posekit.get_freejoint_dims(model)
    expected = np.eye(model.nv)
    free = np.asarray(free_dofs, dtype=int)
    expected[free, free] = 0.0
    np.testing.assert_array_equal(jacobian, expected)


@pytest.mark.parametrize("model_name", list(MODELS))
def test_task_jacobians_match_finite_differences(model_name: str) -> None:
    model = MODELS[model_name]()
    configuration = posekit.Configuration(model)
    rng = np.random.default_rng(11)
    checked = set()
    for _ in range(3):
        q = random_configuration(model, rng)
        configuration.update(q)
        for task in _tasks(model, configuration, rng):
            configuration.update(q)
            analytic = task.compute_jacobian(configuration)
            if isinstance(task, (posekit.DampingTask, posekit.DofFreezingTask)):
                _check_velocity_selection(model, task, analytic)
                checked.add(type(task).__name__)
                continue
            numeric = _numeric_jacobian(task, configuration, q)
            if isinstance(task, posekit.PostureTask):
                # J = I is exact for scalar joints; on ball joints it is the first-order
                # (small error) form of the SO(3) Jacobian, as in the reference API.
                analytic, numeric = (
                    analytic[:, _scalar_dofs(model)],
                    numeric[:, _scalar_dofs(model)],
                )
            assert analytic.shape == numeric.shape, type(task).__name__
            scale = max(1.0, float(np.abs(numeric).max()))
            np.testing.assert_allclose(
                analytic,
                numeric,
                atol=2e-5 * scale,
                err_msg=f"{type(task).__name__} on {model_name}",
            )
            checked.add(type(task).__name__)
    expected = {
        "FrameTask",
        "RelativeFrameTask",
        "ComTask",
        "LookAtTask",
        "AxisAlignTask",
        "PostureTask",
        "DampingTask",
        "DofFreezingTask",
    }
    assert expected <= checked
    if model_name in ("tiny", "coupled", "aloha"):
        assert "EqualityConstraintTask" in checked


def test_weld_and_tendon_equalities_all_have_rows() -> None:
    """6 weld rows, then one row per tendon equality (tendon lengths are computed)."""
    model = _coupled()
    task = posekit.EqualityConstraintTask(model, cost=[1.0, 2.0, 3.0])
    configuration = posekit.Configuration(
        model, random_configuration(model, np.random.default_rng(4))
    )
    error = task.compute_error(configuration)
    assert error.shape == (8,) and task.compute_jacobian(configuration).shape == (8, model.nv)
    # MuJoCo's residual: (L1 - L1(qpos0)) - polynomial(L2 - L2(qpos0)).
    change = configuration.data.ten_length - model.tendon_length0
    np.testing.assert_allclose(error[6], change[0] - 0.1, atol=1e-12)
    np.testing.assert_allclose(error[7], change[1] - 0.3 * change[0], atol=1e-12)
    _, weighted_error, _ = task.compute_qp_residual(configuration)
    np.testing.assert_allclose(weighted_error, -np.repeat([1.0, 2.0, 3.0], [6, 1, 1]) * error)
    only_tendons = posekit.EqualityConstraintTask(model, 1.0, equalities=["coupled_tendons"])
    np.testing.assert_allclose(only_tendons.compute_error(configuration), error[7:])


def test_kinetic_energy_objective_is_the_scaled_inertia_matrix() -> None:
    model = builtin_model("humanoid")
    configuration = posekit.Configuration(model)
    configuration.update(random_configuration(model, np.random.default_rng(9)))
    task = posekit.KineticEnergyRegularizationTask(cost=2e-3)
    task.set_dt(0.02)
    objective = task.compute_qp_objective(configuration)
    assert task.compute_qp_residual(configuration) is None  # dense: no residual form
    velocity = np.random.default_rng(1).normal(size=model.nv)
    inertia_times_v = np.zeros(model.nv)
    mujoco.mj_mulM(model, configuration.data, inertia_times_v, velocity)
    # ½ Δqᵀ H Δq with Δq = v dt is λ times the kinetic energy ½ vᵀ M v.
    dq = velocity * 0.02
    np.testing.assert_allclose(0.5 * dq @ objective.H @ dq, 2e-3 * 0.5 * velocity @ inertia_times_v)
    np.testing.assert_array_equal(objective.c, np.zeros(model.nv))


def test_equality_rows_are_the_same_with_sparse_jacobians() -> None:
    dense_model = _tiny()
    sparse_model = _tiny()
    sparse_model.opt.jacobian = mujoco.mjtJacobian.mjJAC_SPARSE
    dense_model.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
    q = random_configuration(dense_model, np.random.default_rng(3))
    results = []
    for model in (dense_model, sparse_model):
        task = posekit.EqualityConstraintTask(model, cost=[1.0, 2.0])
        configuration = posekit.Configuration(model, q)
        results.append((task.compute_error(configuration), task.compute_jacobian(configuration)))
    np.testing.assert_allclose(results[0][0], results[1][0], atol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], atol=1e-12)
    assert results[0][1].shape == (4, dense_model.nv)  # 1 joint row + 3 connect rows
