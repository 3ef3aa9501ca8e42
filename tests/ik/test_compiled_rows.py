"""The compiled row kernels write the documented sums exactly (``compiled/rows.py``)."""

from __future__ import annotations

import numpy as np
import pytest
from posekit.ik.compiled.frame_rows import frame_rows
from posekit.ik.compiled.rows import mapped_rows, mirror_upper


def _in_order(terms: np.ndarray) -> float:
    total = 0.0
    for term in terms:
        total += float(term)
    return total


@pytest.mark.parametrize("zero_linear_block", [False, True])
def test_mapped_rows_are_the_in_order_sums_of_the_map_times_the_jacobian(
    zero_linear_block: bool,
) -> None:
    rng = np.random.default_rng(int(zero_linear_block))
    nv, first = 11, 2
    jacobian_map = rng.normal(size=(6, 6))
    if zero_linear_block:
        jacobian_map[3:, :3] = 0.0  # a frame task's angular rows: the sum starts at k = 3
    world_jacobian = rng.normal(size=(6, nv))
    error = tuple(rng.normal(size=6))
    cost = np.array([1.0, 0.0, 2.0, 0.5, 3.0, 1.5])
    columns = np.array([0, 1, 2, 5, 6, 9], dtype=np.int32)
    out = np.full((first + 6, nv), np.nan)
    rhs = np.full(first + 6, np.nan)
    written, squared_norm = mapped_rows(
        error, tuple(jacobian_map.ravel()), world_jacobian, cost, True, 0.7, out, rhs, first,
        columns,
    )  # fmt: skip
    kept = [i for i in range(6) if cost[i] != 0.0]
    assert written == len(kept)
    expected_rhs = [-0.7 * cost[i] * error[i] for i in kept]
    np.testing.assert_array_equal(rhs[first : first + written], expected_rhs)
    assert squared_norm == _in_order(np.square(expected_rhs))
    for row, i in enumerate(kept):
        expected = np.zeros(nv)
        for column in columns:
            expected[column] = cost[i] * _in_order(jacobian_map[i] * world_jacobian[:, column])
        np.testing.assert_array_equal(out[first + row], expected)


@pytest.mark.parametrize("n", [1, 2, 7, 30])
def test_mirror_upper_copies_the_upper_triangle_down(n: int) -> None:
    matrix = np.random.default_rng(n).normal(size=(n, n))
    upper = np.triu(matrix)
    mirror_upper(matrix)
    np.testing.assert_array_equal(matrix, upper + np.triu(upper, 1).T)


@pytest.mark.parametrize(
    "cost",
    [[1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 2.0, 0.5, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 3.0, 1.0, 2.0],
     [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]],
)  # fmt: skip
@pytest.mark.parametrize("zero_linear_block", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_frame_rows_are_the_mapped_rows(
    cost: list[float], zero_linear_block: bool, weighted: bool
) -> None:
    rng = np.random.default_rng(len(cost) + int(zero_linear_block))
    nv, first = 13, 3
    jacobian_map = rng.normal(size=(6, 6))
    if zero_linear_block:
        jacobian_map[3:, :3] = 0.0
    world_jacobian = rng.normal(size=(6, nv))
    error = tuple(rng.normal(size=6))
    columns = np.array([0, 2, 3, 4, 8, 11, 12], dtype=np.int32)
    results = []
    for kernel in (mapped_rows, frame_rows):
        out, rhs = np.full((first + 6, nv), np.nan), np.full(first + 6, np.nan)
        written, squared_norm = kernel(
            error, tuple(jacobian_map.ravel()), world_jacobian, np.array(cost), weighted, 0.3,
            out, rhs, first, columns,
        )  # fmt: skip
        results.append((written, squared_norm, out, rhs))
    (written, squared_norm, out, rhs), (written_6, squared_norm_6, out_6, rhs_6) = results
    assert written_6 == written == (6 if not weighted else sum(c != 0.0 for c in cost))
    assert squared_norm_6 == squared_norm
    np.testing.assert_array_equal(out_6, out)  # NaN where neither wrote
    np.testing.assert_array_equal(rhs_6, rhs)
