"""The compiled helpers around the step: integration, pose targets, observers, libraries."""

from __future__ import annotations

import copy
import pickle

import mujoco
import numpy as np
import posekit
import pytest
from inline_models import TINY_XML
from posekit.ik.compiled import engine as compiled_engine
from posekit.ik.compiled import plan as compiled_plan
from posekit.ik.compiled import symbols
from posekit.ik.compiled.mjdata_layout import EFC_FIELDS, efc_offsets
from support.models import builtin_model, random_configuration

TINY = mujoco.MjModel.from_xml_string(TINY_XML)


def test_compiled_integration_is_the_bindings_integration() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        q = random_configuration(TINY, rng)
        velocity = rng.normal(size=TINY.nv)
        compiled = posekit.Configuration(TINY, q)
        compiled.integrate_inplace(velocity, 0.05)
        with posekit.using_engine("python"):
            reference = posekit.Configuration(TINY, q)
            reference.integrate_inplace(velocity, 0.05)
        np.testing.assert_array_equal(compiled.q, reference.q)
        np.testing.assert_array_equal(compiled.data.xpos, reference.data.xpos)
        np.testing.assert_array_equal(compiled.data.subtree_com, reference.data.subtree_com)


@pytest.mark.parametrize(
    "velocity",
    [np.full(TINY.nv, np.nan), np.zeros(TINY.nv + 1), [0.0] * (TINY.nv - 1), "fast"],
    ids=["nan", "too_long", "short_list", "text"],
)
def test_a_bad_velocity_is_refused_and_q_kept(velocity: object) -> None:
    configuration = posekit.Configuration(TINY)
    before = configuration.q
    with pytest.raises(posekit.InvalidConfigurationVector):
        configuration.integrate_inplace(velocity, 0.01)  # type: ignore[arg-type]
    np.testing.assert_array_equal(configuration.q, before)


def test_integration_accepts_what_the_bindings_accept() -> None:
    configuration = posekit.Configuration(TINY)
    velocity = np.zeros((TINY.nv, 2))[:, 0]  # a strided view
    velocity[:] = 0.1
    configuration.integrate_inplace(velocity, 1)  # an integer dt
    with posekit.using_engine("python"):
        reference = posekit.Configuration(TINY)
        reference.integrate_inplace(velocity.copy(), 1.0)
    np.testing.assert_array_equal(configuration.q, reference.q)


def test_a_refused_pose_target_keeps_the_previous_one() -> None:
    task = posekit.FrameTask("tip", "site", 1.0, 1.0)
    good = posekit.SE3(np.array([2.0, 0.0, 0.0, 0.0, 0.1, 0.2, 0.3]))  # normalised on store
    task.set_target(good)
    rotation, position = (array.copy() for array in task.kernel_targets())
    for bad in (
        posekit.SE3(np.array([np.nan, 0, 0, 0, 0, 0, 0.0])),
        posekit.SE3(np.zeros(7)),
        np.eye(4),
    ):
        with pytest.raises(posekit.InvalidTarget):
            task.set_target(bad)  # type: ignore[arg-type]
    target = task.transform_target_to_world
    assert target is not None
    np.testing.assert_array_equal(target.wxyz_xyz, [1.0, 0.0, 0.0, 0.0, 0.1, 0.2, 0.3])
    np.testing.assert_array_equal(task.kernel_targets()[0], rotation)
    np.testing.assert_array_equal(task.kernel_targets()[1], position)
    np.testing.assert_array_equal(rotation.reshape(3, 3), np.eye(3))


def test_pose_composition_matches_matrix_products() -> None:
    rng = np.random.default_rng(1)
    for _ in range(50):
        a, b = posekit.SE3.sample_uniform(rng), posekit.SE3.sample_uniform(rng)
        np.testing.assert_allclose((a @ b).as_matrix(), a.as_matrix() @ b.as_matrix(), atol=1e-14)
    strided = np.zeros((7, 2))[:, 0]
    strided[:] = [1.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0]
    moved = posekit.SE3(strided) @ posekit.SE3.from_translation(np.array([1, 2, 3]))
    np.testing.assert_array_equal(moved.wxyz_xyz, [1.0, 0.0, 0.0, 0.0, 1.5, 2.0, 3.0])


def test_tasks_and_limits_copy_and_pickle_without_their_observers() -> None:
    configuration = posekit.Configuration(builtin_model("arm7"))
    task = posekit.FrameTask("ee", "site", 1.0, 1.0)
    task.set_target_from_configuration(configuration)
    limit = posekit.ConfigurationLimit(configuration.model)
    posekit.solve_ik(configuration, [task], 0.01, "daqp", limits=[limit])
    for clone in (copy.deepcopy(task), pickle.loads(pickle.dumps(task))):
        np.testing.assert_array_equal(clone.kernel_targets()[1], task.kernel_targets()[1])
        assert "_observers" not in vars(clone)
    assert "_observers" not in vars(copy.deepcopy(limit))


def test_only_public_assignments_notify_a_plan() -> None:
    configuration = posekit.Configuration(builtin_model("arm7"))
    task = posekit.FrameTask("ee", "site", 1.0, 1.0)
    task.set_target_from_configuration(configuration)
    plan = compiled_engine.plan_for(configuration, [task], 0.01)
    task.set_target(posekit.SE3.identity())  # in place, private: no notice
    assert not plan.stale
    task.gain = 0.5
    assert plan.stale


def test_mjdata_offsets_are_read_and_verified() -> None:
    offsets = efc_offsets()
    assert not isinstance(offsets, str), offsets
    assert offsets.shape == (len(EFC_FIELDS),) and len(set(offsets.tolist())) == len(EFC_FIELDS)


def test_a_daqp_with_unknown_structs_makes_the_compiled_path_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(symbols.importlib.metadata, "version", lambda name: "0.99.0")
    with pytest.raises(symbols.CompiledUnavailable, match=r"daqp 0\.99\.0"):
        symbols.resolve_native_libraries()


def test_without_the_libraries_every_step_takes_the_python_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reason = "no libmujoco found next to the mujoco package (test)"
    monkeypatch.setattr(compiled_plan, "availability", lambda: reason)
    configuration = posekit.Configuration(builtin_model("arm7"))
    task = posekit.FrameTask("ee", "site", 1.0, 1.0)
    task.set_target_from_configuration(configuration)
    assert posekit.fallback_reason(configuration, [task], 0.02) == reason
    compiled_engine.forget_warnings()
    with pytest.warns(posekit.CompiledFallbackWarning, match="no libmujoco"):
        velocity = posekit.solve_ik(configuration, [task], 0.02, "daqp")
    with posekit.using_engine("python"):
        np.testing.assert_array_equal(
            velocity, posekit.solve_ik(configuration, [task], 0.02, "daqp")
        )


# TINY's robot (body 1) and a free box beside it: DoFs outside body 1's subtree.
TWO_BODIES = mujoco.MjModel.from_xml_string(
    TINY_XML.replace(
        "  </worldbody>",
        '    <body name="box" pos="1 0 1"><freejoint/><geom type="box" size="0.1 0.1 0.1"/>'
        '<body name="lid"><joint axis="1 0 0"/><geom size="0.05" mass="0.3"/></body>'
        "</body>\n  </worldbody>",
    )
)


@pytest.mark.parametrize("model", [TINY, TWO_BODIES], ids=["tiny", "two_bodies"])
def test_compiled_com_jacobian_is_mujocos(model: mujoco.MjModel) -> None:
    """The CoM rows' Jacobian, one pass over the DoFs, is ``mj_jacSubtreeCom``'s (H = JᵀJ)."""
    rng = np.random.default_rng(1)
    configuration = posekit.Configuration(model)
    task = posekit.ComTask(cost=1.0)
    task.set_target(np.zeros(3))
    for _ in range(20):
        configuration.update(random_configuration(model, rng))
        posekit.solve_ik(configuration, [task], 0.01, "daqp", damping=0.0, limits=[])
        hessian = compiled_engine.plan_for(configuration, [task], 0.01, 0.0, []).last_qp().H
        jacobian = np.zeros((3, model.nv))
        mujoco.mj_jacSubtreeCom(model, configuration.data, jacobian, 1)
        np.testing.assert_allclose(hessian, jacobian.T @ jacobian, rtol=0, atol=1e-12)
    if model is TWO_BODIES:
        assert not np.any(jacobian[:, -7:])  # the box's DoFs: zero columns, and compiled so
