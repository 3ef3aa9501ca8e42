"""The run command's demo converges on the built-in arm."""

from __future__ import annotations

import itertools

from posekit.demo import run_demo


def test_demo_converges_monotonically() -> None:
    errors = run_demo(steps=20)
    assert errors[-1] < 1e-3
    # Monotone down to the micrometre level, where the damping terms balance the task.
    assert all(later < earlier for earlier, later in itertools.pairwise(errors) if earlier > 1e-5)
