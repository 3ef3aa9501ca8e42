"""Kernels called without Numba's type dispatch, and the step's faster paths: the same numbers."""

from __future__ import annotations

import numpy as np
import posekit
import pytest
from posekit.ik.compiled import header as h
from posekit.ik.compiled.configuration_kernel import (
    INTEGRATE_SIGNATURE,
    ISSUED,
    integrate_and_update,
    integrate_entry,
)
from posekit.ik.compiled.engine import plan_for
from posekit.ik.compiled.entry_points import direct
from posekit.ik.compiled.rows import add_normal_equations
from posekit.ik.compiled.step_kernel import run_step, run_step_at, step_entry
from support.arm_problem import ARM, Problem, arm_problem

DT = 0.01


def _problem() -> Problem:
    return arm_problem((0.08, -0.03, -0.05))


def test_direct_returns_the_overload_of_an_eagerly_compiled_kernel() -> None:
    entry = direct(integrate_and_update, INTEGRATE_SIGNATURE)
    assert entry is integrate_entry()
    assert entry is next(iter(integrate_and_update.overloads.values())).entry_point


def test_the_step_at_an_address_is_the_step_on_arrays() -> None:
    configuration, tasks, limits = _problem()
    plan = plan_for(configuration, tasks, DT, limits=limits)
    ints = plan.header()
    assert ints[h.H_NINTS] == ints.shape[0]
    first = posekit.solve_ik(configuration, tasks, DT, "daqp", limits=limits)
    velocity = np.zeros(ARM.nv)
    assert run_step(ints, velocity) == run_step_at(int(ints.ctypes.data)) >= 1
    np.testing.assert_array_equal(velocity, first)
    assert step_entry()(int(ints.ctypes.data)) == ints[h.H_STATUS]


def test_steps_integrated_directly_follow_the_python_path() -> None:
    compiled = _problem()
    reference = _problem()
    for _ in range(30):
        velocity = posekit.solve_ik(compiled[0], compiled[1], DT, "daqp", limits=compiled[2])
        assert velocity is ISSUED[0]  # integrated without type dispatch
        compiled[0].integrate_inplace(velocity, DT)
        with posekit.using_engine("python"):
            step = posekit.solve_ik(reference[0], reference[1], DT, "daqp", limits=reference[2])
            reference[0].integrate_inplace(step, DT)
        np.testing.assert_allclose(compiled[0].q, reference[0].q, rtol=0, atol=1e-9)
        np.testing.assert_array_equal(compiled[0].data.xpos, _fk(compiled[0].q))


def _fk(q: np.ndarray) -> np.ndarray:
    configuration = posekit.Configuration(ARM, q)
    return configuration.data.xpos


def test_the_returned_velocity_reshaped_is_refused_and_q_kept() -> None:
    configuration, tasks, limits = _problem()
    velocity = posekit.solve_ik(configuration, tasks, DT, "daqp", limits=limits)
    velocity.shape = (1, ARM.nv)  # in place: still the issued array, two dimensions now
    before = configuration.q
    with pytest.raises(posekit.InvalidConfigurationVector):
        configuration.integrate_inplace(velocity, DT)
    np.testing.assert_array_equal(configuration.q, before)


def test_the_returned_velocity_edited_is_integrated_as_edited() -> None:
    configuration, tasks, limits = _problem()
    velocity = posekit.solve_ik(configuration, tasks, DT, "daqp", limits=limits)
    velocity *= 0.5
    expected = configuration.integrate(velocity, DT)
    configuration.integrate_inplace(velocity, DT)
    np.testing.assert_array_equal(configuration.q, expected)
    velocity[0] = np.nan
    with pytest.raises(posekit.InvalidConfigurationVector):
        configuration.integrate_inplace(velocity, DT)
    np.testing.assert_array_equal(configuration.q, expected)


def test_a_pose_target_of_any_layout_or_dtype_is_stored_as_its_float64_values() -> None:
    values = [2.0, 0.0, 0.0, 0.0, 0.1, -0.2, 0.3]
    strided = np.zeros((7, 2))[:, 0]
    strided[:] = values
    integers = posekit.SE3(np.array(values))
    integers.wxyz_xyz = np.array([2, 0, 0, 0, 1, -2, 3])  # a public slot: anything goes in
    expected = posekit.FrameTask("ee", "site", 1.0, 1.0)
    expected.set_target(posekit.SE3(np.array(values)))
    for pose, translation in ((posekit.SE3(strided), values[4:]), (integers, [1.0, -2.0, 3.0])):
        task = posekit.FrameTask("ee", "site", 1.0, 1.0)
        task.set_target(pose)
        target = task.transform_target_to_world
        assert target is not None
        np.testing.assert_array_equal(target.wxyz_xyz, [1.0, 0.0, 0.0, 0.0, *translation])
        np.testing.assert_array_equal(task.kernel_targets()[0], expected.kernel_targets()[0])
    bad = posekit.SE3(np.array(values))
    bad.wxyz_xyz = np.array([1, 0, 0, 0, 0, 0, 0], dtype=np.float32)
    bad.wxyz_xyz[4] = np.inf
    task = posekit.FrameTask("ee", "site", 1.0, 1.0)
    with pytest.raises(posekit.InvalidTarget):
        task.set_target(bad)
    assert task.transform_target_to_world is None


@pytest.mark.parametrize("count", [3, 6, 4])
def test_normal_equations_over_every_column_are_the_column_by_column_sums(count: int) -> None:
    rng = np.random.default_rng(count)
    nv, first = 9, 2
    rows = rng.normal(size=(first + count + 1, nv))
    rhs = rng.normal(size=first + count + 1)
    columns = np.arange(nv, dtype=np.int32)
    hessian = rng.normal(size=(nv, nv))
    gradient = rng.normal(size=nv)
    expected_hessian, expected_gradient = hessian.copy(), gradient.copy()
    block = rows[first : first + count]
    for a in range(nv):  # the documented order: each entry's terms summed by row, then added
        expected_gradient[a] += _in_order(block[:, a] * rhs[first : first + count])
        for b in range(a, nv):
            expected_hessian[a, b] += _in_order(block[:, a] * block[:, b])
    add_normal_equations(rows, rhs, first, count, columns, hessian, gradient, np.zeros((nv, 8)))
    np.testing.assert_array_equal(hessian, expected_hessian)
    np.testing.assert_array_equal(gradient, expected_gradient)


def _in_order(terms: np.ndarray) -> float:
    total = 0.0
    for term in terms:
        total += float(term)
    return total
