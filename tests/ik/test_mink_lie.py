"""Lie utilities and their memory semantics as in mink 1.3.0.

mink's ``SE3.translation()``, ``SE3.rotation().wxyz`` and ``parameters()`` are views of
the stored parameters and the constructors keep the array they are given; posekit does
the same, and tasks keep their own copy of a target either way.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np
import posekit
import pytest


def test_skew_checks_the_shape(mink: ModuleType) -> None:
    for lib in (mink, posekit):
        np.testing.assert_array_equal(
            lib.lie.skew(np.array([1.0, 2.0, 3.0])),
            [[0.0, -3.0, 2.0], [3.0, 0.0, -1.0], [-2.0, 1.0, 0.0]],
        )
        with pytest.raises(AssertionError):
            lib.lie.skew(np.zeros(5))
    with pytest.raises(posekit.InvalidShape, match=r"shape \(3,\), got shape \(5,\)"):
        posekit.lie.skew(np.zeros(5))
    with pytest.raises(ValueError):
        posekit.lie.utils.skew(np.zeros((3, 1)))


def test_get_epsilon_matches(mink: ModuleType) -> None:
    for dtype in (np.float32, np.float64):
        assert posekit.lie.get_epsilon(np.dtype(dtype)) == mink.lie.get_epsilon(np.dtype(dtype))
    assert posekit.lie.utils.get_epsilon(np.dtype(np.float64)) == 1e-10


def _pose(lib: ModuleType) -> object:
    return lib.SE3(np.array([np.cos(0.2), 0.0, np.sin(0.2), 0.0, 1.0, 2.0, 3.0]))


@pytest.mark.parametrize("library", ["mink", "posekit"])
def test_accessors_are_views_of_the_parameters(library: str, mink: ModuleType) -> None:
    lib = mink if library == "mink" else posekit
    parameters = np.array([1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0])
    pose = lib.SE3(parameters)
    assert pose.wxyz_xyz is parameters and pose.parameters() is parameters
    translation = pose.translation()
    translation[0] = 9.0  # writes through, as in mink
    assert pose.wxyz_xyz[4] == 9.0
    rotation = pose.rotation()
    assert np.shares_memory(rotation.wxyz, pose.wxyz_xyz)
    rotation.wxyz[:] = [0.0, 1.0, 0.0, 0.0]
    np.testing.assert_array_equal(pose.wxyz_xyz[:4], [0.0, 1.0, 0.0, 0.0])
    wxyz = np.array([1.0, 0.0, 0.0, 0.0])
    so3 = lib.SO3(wxyz)
    assert so3.wxyz is wxyz and so3.parameters() is wxyz
    copy = pose.copy()
    copy.wxyz_xyz[4] = -1.0
    assert pose.wxyz_xyz[4] == 9.0  # copy() is independent
    assert not np.shares_memory(pose.as_matrix(), pose.wxyz_xyz)


@pytest.mark.parametrize("library", ["mink", "posekit"])
def test_tasks_keep_their_own_target(library: str, mink: ModuleType) -> None:
    lib = mink if library == "mink" else posekit
    target = _pose(lib)
    task = lib.FrameTask("ee", "site", position_cost=1.0, orientation_cost=1.0)
    task.set_target(target)
    relative = lib.RelativeFrameTask("ee", "site", "base", "body", 1.0, 1.0)
    relative.set_target(target)
    target.translation()[:] = 0.0
    target.rotation().wxyz[:] = [1.0, 0.0, 0.0, 0.0]
    np.testing.assert_allclose(task.transform_target_to_world.translation(), [1.0, 2.0, 3.0])
    np.testing.assert_allclose(relative.transform_target_to_root.translation(), [1.0, 2.0, 3.0])


def test_groups_hash_like_mink(mink: ModuleType) -> None:
    for lib in (mink, posekit):
        a, b = _pose(lib), _pose(lib)
        assert a == b and hash(a) == hash(b) and len({a, b}) == 1
        assert hash(lib.SO3.identity()) == hash(lib.SO3.identity())


def test_interpolate_rejects_alpha_as_mink(mink: ModuleType) -> None:
    for lib in (mink, posekit):
        with pytest.raises(ValueError, match=r"Expected alpha within \[0.0, 1.0\]"):
            lib.SE3.identity().interpolate(lib.SE3.identity(), 1.5)
