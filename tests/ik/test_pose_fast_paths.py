"""The one-compiled-call paths of ``SE3.from_translation``, ``SE3 @ SE3`` and
``FrameTask.set_target``: the same poses, stored targets and errors as their general paths."""

from __future__ import annotations

import numpy as np
import posekit
import pytest
from posekit import SE3
from posekit.ik.lie.pose_kernels import translation_into
from posekit.ik.tasks.pose_target import POSE_BUFFER, store_pose_target

STRIDED = np.zeros((3, 2))[:, 0]
STRIDED[:] = [0.4, -0.5, 0.6]


@pytest.mark.parametrize(
    "translation",
    [np.array([0.1, -0.2, 0.3]), STRIDED, [1, 2, 3], np.array([1, 2, 3]), (0.5, 0.0, -1.0)],
)
def test_from_translation_is_the_identity_rotation_and_the_float64_translation(
    translation: object,
) -> None:
    pose = SE3.from_translation(translation)  # type: ignore[arg-type]
    expected = np.array([1.0, 0.0, 0.0, 0.0, *np.asarray(translation, dtype=np.float64)])
    np.testing.assert_array_equal(pose.wxyz_xyz, expected)
    assert pose.wxyz_xyz.dtype == np.float64 and pose.wxyz_xyz.flags.c_contiguous


@pytest.mark.parametrize("translation", [np.zeros(4), np.zeros((1, 3)), np.zeros(2), 1.0])
def test_from_translation_refuses_other_shapes(translation: object) -> None:
    with pytest.raises(posekit.InvalidShape):
        SE3.from_translation(translation)  # type: ignore[arg-type]


def test_the_compiled_translation_writes_nothing_for_another_length() -> None:
    out = np.full(7, np.nan)
    assert translation_into(np.zeros(4), out) == 1
    assert np.isnan(out).all()
    assert translation_into(np.array([1.0, 2.0, 3.0]), out) == 0
    np.testing.assert_array_equal(out, [1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0])


def test_composition_by_matmul_is_multiply() -> None:
    rng = np.random.default_rng(3)
    for _ in range(10):
        a, b = SE3.sample_uniform(rng), SE3.sample_uniform(rng)
        product = a @ b
        assert type(product) is SE3
        np.testing.assert_array_equal(product.wxyz_xyz, a.multiply(b).wxyz_xyz)
        np.testing.assert_allclose(product.as_matrix(), a.as_matrix() @ b.as_matrix(), atol=1e-12)


def _reference_buffer(target: object) -> np.ndarray:
    buffer = np.zeros(POSE_BUFFER)
    store_pose_target(target, "target", buffer)
    return buffer


@pytest.mark.parametrize(
    "values",
    [[2.0, 0.0, 0.0, 0.0, 0.1, -0.2, 0.3], [0.5, 0.5, -0.5, 0.5, 1.0, 2.0, 3.0]],
)
def test_frame_task_set_target_stores_what_the_general_path_stores(values: list[float]) -> None:
    strided = np.zeros((7, 2))[:, 1]
    strided[:] = values
    for pose in (SE3(np.array(values)), SE3(strided)):
        task = posekit.FrameTask("ee", "site", 1.0, 1.0)
        task.set_target(pose)
        expected = _reference_buffer(pose)
        target = task.transform_target_to_world
        assert target is not None
        np.testing.assert_array_equal(target.wxyz_xyz, expected[:7])
        rotation, translation = task.kernel_targets()
        np.testing.assert_array_equal(rotation, expected[7:16])
        np.testing.assert_array_equal(translation, expected[16:])


@pytest.mark.parametrize(
    "bad",
    [
        SE3(np.array([1.0, 0.0, 0.0, 0.0, np.nan, 0.0, 0.0])),
        SE3(np.zeros(7)),
        "not a pose",
    ],
)
def test_frame_task_set_target_refuses_and_keeps_the_previous_target(bad: object) -> None:
    task = posekit.FrameTask("ee", "site", 1.0, 1.0)
    good = SE3(np.array([1.0, 0.0, 0.0, 0.0, 0.1, 0.2, 0.3]))
    task.set_target(good)
    with pytest.raises(posekit.InvalidTarget):
        task.set_target(bad)  # type: ignore[arg-type]
    target = task.transform_target_to_world
    assert target is not None
    np.testing.assert_array_equal(target.wxyz_xyz, good.wxyz_xyz)
