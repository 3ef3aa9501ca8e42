"""A frame task's target given as numbers (``FrameTask.set_target_values``, the road of a
moved target) is stored exactly as ``set_target(SE3(np.array([*wxyz, *position])))``
stores it, refused alike, and reaches a compiled plan built before the move."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import mujoco
import numpy as np
import posekit
import pytest
from inline_models import TINY_XML
from posekit.ik.compiled.engine import plan_for

TINY = mujoco.MjModel.from_xml_string(TINY_XML)
FRAME = ("tip", "site")


def stored(task: posekit.FrameTask) -> list[float]:
    """Everything the task holds of its target: ``wxyz_xyz``, the rotation, the position."""
    rotation, position = task.kernel_targets()
    pose = task.transform_target_to_world
    assert pose is not None
    return [*pose.wxyz_xyz.tolist(), *rotation.tolist(), *position.tolist()]


def pairs() -> list[tuple[list[Any], list[Any]]]:
    """Quaternions (unit or not) and positions, with integers and NumPy scalars among them."""
    rng = np.random.default_rng(7)
    values: list[tuple[list[Any], list[Any]]] = [
        ([0.0, 1.0, 0.0, 0.0], [0.45, 0.0, 0.35]),
        ([2, 0, 0, 0], [1, -2, 3]),
        ([np.float64(0.5), 0.5, 0.5, 0.5], [np.float64(0.1), 0.2, 0.3]),
        ([1e-5, 0.0, 0.0, 0.0], [1e300, -1e300, 0.0]),
    ]
    for _ in range(50):
        wxyz = rng.normal(size=4)
        if rng.random() < 0.5:
            wxyz /= np.linalg.norm(wxyz)
        values.append((wxyz.tolist(), rng.uniform(-1.0, 1.0, size=3).tolist()))
    return values


def test_values_are_stored_as_the_transform_of_them_is() -> None:
    for wxyz, position in pairs():
        by_values = posekit.FrameTask(*FRAME, 1.0, 1.0)
        by_transform = posekit.FrameTask(*FRAME, 1.0, 1.0)
        by_values.set_target_values(wxyz, position)
        by_transform.set_target(posekit.SE3(np.array([*wxyz, *position])))
        assert np.array_equal(stored(by_values), stored(by_transform))  # the very floats


@pytest.mark.parametrize(
    ("wxyz", "position"),
    [
        ([np.nan, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0]),
        ([1.0, 0.0, 0.0, 0.0], [0.0, np.inf, 0.0]),
        ([0.0, 0.0, 0.0, 0.0], [0.1, 0.2, 0.3]),
        ([1.0, 0.0, 0.0], [0.1, 0.2, 0.3]),  # 6 numbers
        ([1.0, 0.0, 0.0, 0.0], [0.1, 0.2, 0.3, 0.4]),  # 8 numbers
        ([1.0, 0.0, 0.0, 0.0], ["a", 0.2, 0.3]),
    ],
    ids=["nan", "inf", "zero_quaternion", "short", "long", "text"],
)
def test_refused_values_are_refused_as_their_transform_is_and_change_nothing(
    wxyz: list[Any], position: list[Any]
) -> None:
    task = posekit.FrameTask(*FRAME, 1.0, 1.0)
    task.set_target_values([0.0, 1.0, 0.0, 0.0], [0.4, 0.1, 0.3])
    before = stored(task)
    with pytest.raises(Exception) as expected:
        posekit.FrameTask(*FRAME, 1.0, 1.0).set_target(posekit.SE3(np.array([*wxyz, *position])))
    with pytest.raises(Exception) as refused:
        task.set_target_values(wxyz, position)
    assert type(refused.value) is type(expected.value)
    assert str(refused.value) == str(expected.value)
    assert np.array_equal(stored(task), before)


def test_copies_and_pickles_stage_their_own_values() -> None:
    task = posekit.FrameTask(*FRAME, 1.0, 1.0)
    task.set_target_values([1.0, 0.0, 0.0, 0.0], [0.1, 0.2, 0.3])
    for other in (copy.deepcopy(task), pickle.loads(pickle.dumps(task))):
        assert np.array_equal(stored(other), stored(task))
        other.set_target_values([0.0, 0.0, 1.0, 0.0], [0.3, 0.2, 0.1])
        target = other.transform_target_to_world
        assert target is not None
        assert target.wxyz_xyz.tolist() == [0.0, 0.0, 1.0, 0.0, 0.3, 0.2, 0.1]
        assert stored(task)[4:7] == [0.1, 0.2, 0.3]  # the original kept its target


def test_a_compiled_plan_solves_for_values_set_after_it_was_built() -> None:
    configuration = posekit.Configuration(TINY)
    task = posekit.FrameTask(*FRAME, 1.0, 0.5)
    task.set_target_from_configuration(configuration)
    posekit.solve_ik(configuration, [task], 0.01, "daqp")  # builds the plan on the old target
    plan = plan_for(configuration, [task], 0.01)
    wxyz, position = [0.9, 0.1, 0.2, 0.3], [0.2, 0.1, 0.4]
    task.set_target_values(wxyz, position)
    fresh = posekit.FrameTask(*FRAME, 1.0, 0.5)
    fresh.set_target(posekit.SE3(np.array([*wxyz, *position])))
    moved = posekit.solve_ik(configuration, [task], 0.01, "daqp")
    with posekit.using_engine("python"):
        reference = posekit.solve_ik(configuration, [fresh], 0.01, "daqp")
    np.testing.assert_allclose(moved, reference, rtol=0, atol=1e-9)
    assert np.array_equal(moved, posekit.solve_ik(configuration, [fresh], 0.01, "daqp"))
    assert plan_for(configuration, [task], 0.01) is plan and plan.builds == 1  # read in place
