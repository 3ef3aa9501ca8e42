"""``Plan.advance``: a live configuration's whole step in one compiled call.

It must leave exactly what the step taken call by call leaves — ``solve_ik`` on the
compiled engine, the tolerance test, ``integrate_inplace``, then the plan's error
norms — bit for bit, on random stacks of every task and limit kind; and on every
outcome it does not finish, ``qpos`` and the kinematics as they were.
"""

from __future__ import annotations

import mujoco
import numpy as np
import posekit
import pytest
from inline_models import TINY_XML
from posekit.ik.compiled.advance_kernel import (
    ADVANCED,
    CONVERGED,
    NO_SOLUTION,
    NOT_COMPILED,
    Q_NOT_FINITE,
)
from posekit.ik.compiled.engine import plan_for
from random_stacks import Stack, random_stack
from support.models import builtin_model, drifting_configuration, random_configuration

STEPS = 3


def _call_by_call(
    stack: Stack, configuration: posekit.Configuration, tolerance: float
) -> tuple[str, np.ndarray | None]:
    """The step as a session took it before ``advance``: the outcome and the norms."""
    velocity = stack.solve(configuration)
    if np.max(np.abs(velocity), initial=0.0) * stack.dt < tolerance:
        return "converged", stack.plan(configuration).error_norms()
    configuration.integrate_inplace(velocity, stack.dt)
    return "advanced", stack.plan(configuration).error_norms()


@pytest.mark.parametrize("robot", ["arm7", "humanoid"])
@pytest.mark.parametrize("seed", range(12))
def test_advance_leaves_what_the_step_call_by_call_leaves(robot: str, seed: int) -> None:
    model = builtin_model(robot)
    rng = np.random.default_rng(seed)
    start = random_configuration(model, rng)
    ours, theirs = posekit.Configuration(model, start), posekit.Configuration(model, start)
    stack = random_stack(theirs, rng, well_posed=bool(seed % 2))
    ours_stack = Stack(stack.tasks, stack.constraints, stack.limits, stack.dt, stack.damping)
    tolerance = float(rng.choice([1e-12, 1e-3]))
    named = {ADVANCED: "advanced", CONVERGED: "converged"}
    for _ in range(STEPS):
        plan = ours_stack.plan(ours)
        assert plan.reason is None, plan.reason
        before = ours.data.qpos.tobytes()
        outcome = plan.advance(tolerance)
        if outcome == NO_SOLUTION:  # daqp failed: the session's Python road takes over
            assert ours.data.qpos.tobytes() == before
            return
        expected, norms = _call_by_call(stack, theirs, tolerance)
        assert named[outcome] == expected
        assert ours.data.qpos.tobytes() == theirs.data.qpos.tobytes()
        assert ours.data.xpos.tobytes() == theirs.data.xpos.tobytes()
        np.testing.assert_array_equal(plan.last_norms(), norms)


def _reaching(
    configuration: posekit.Configuration, site: str, offset: list[float], orientation: float
) -> posekit.FrameTask:
    """A frame task on ``site`` whose target is ``offset`` [m] away in the world."""
    task = posekit.FrameTask(site, "site", position_cost=1.0, orientation_cost=orientation)
    here = configuration.get_transform_frame_to_world(site, "site")
    task.set_target(posekit.SE3.from_translation(np.array(offset)) @ here)
    return task


def test_a_step_below_tolerance_keeps_q_and_reports_its_norms() -> None:
    model = builtin_model("arm7")
    configuration = posekit.Configuration(model)
    configuration.update_from_keyframe("home")
    hand = _reaching(configuration, "ee", [0.02, 0.0, 0.0], orientation=1.0)
    plan = plan_for(configuration, [hand], 0.01, limits=[])
    before = configuration.data.qpos.tobytes()
    assert plan.advance(1.0) == CONVERGED
    assert configuration.data.qpos.tobytes() == before
    assert plan.last_norms() == pytest.approx([0.02], abs=1e-12)
    assert plan.advance(0.0) == ADVANCED
    assert configuration.data.qpos.tobytes() != before
    assert plan.last_norms()[0] < 0.02


def test_no_solution_moves_nothing() -> None:
    model = builtin_model("arm7")
    configuration = posekit.Configuration(model)
    configuration.update_from_keyframe("home")
    far = posekit.SE3.from_translation(np.array([5.0, 0.0, 0.0]))
    hard = posekit.FrameTask("ee", "site", 1.0, 1.0)
    hard.set_target(far)
    plan = plan_for(configuration, [], 0.01, limits=[posekit.ConfigurationLimit(model)],
                    constraints=[hard])  # fmt: skip
    before, poses = configuration.data.qpos.tobytes(), configuration.data.xpos.tobytes()
    assert plan.advance(0.0) == NO_SOLUTION
    assert configuration.data.qpos.tobytes() == before
    assert configuration.data.xpos.tobytes() == poses


def test_a_non_finite_integration_puts_q_and_the_kinematics_back() -> None:
    configuration = drifting_configuration()
    tip = _reaching(configuration, "tip", [0.0, 0.05, 0.0], orientation=0.0)
    plan = plan_for(configuration, [tip], 0.01, limits=[])
    before, poses = configuration.data.qpos.tobytes(), configuration.data.site_xpos.tobytes()
    assert plan.advance(0.0) == Q_NOT_FINITE
    assert configuration.data.qpos.tobytes() == before
    assert configuration.data.site_xpos.tobytes() == poses


def test_a_plan_on_the_python_path_calls_nothing() -> None:
    class Custom(posekit.FrameTask):
        """A user-defined subclass: the compiled step leaves it to the Python path."""

    model = mujoco.MjModel.from_xml_string(TINY_XML)
    configuration = posekit.Configuration(model)
    task = Custom("tip", "site", 1.0, 1.0)
    task.set_target_from_configuration(configuration)
    plan = plan_for(configuration, [task], 0.01, limits=[])
    assert plan.reason is not None
    before = configuration.data.qpos.tobytes()
    assert plan.advance(0.0) == NOT_COMPILED
    assert configuration.data.qpos.tobytes() == before
