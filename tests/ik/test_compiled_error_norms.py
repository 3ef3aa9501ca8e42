r"""Compiled error norms equal ``‖compute_error‖``, task by task, robot by robot.

Random stacks (:mod:`random_stacks`: every task kind, as objective or hard constraint)
are solved step after step on the compiled path; after each step, and after targets and
weights change (the plan patched in place), :meth:`Plan.error_norms` must give every
task's :math:`\|e\|` as the task's own ``compute_error`` does, to 1e-9, in the plan's
order (objectives, then constraints; ``NaN`` for a kinetic-energy task).
"""

from __future__ import annotations

from collections.abc import Callable

import mujoco
import numpy as np
import posekit
import pytest
from inline_models import COUPLED_XML, TINY_XML
from posekit.ik.compiled.engine import error_norms, plan_for
from posekit.ik.compiled.plan import Plan
from random_stacks import MAKERS, Stack, random_stack
from support.models import builtin_model, menagerie_model, random_configuration

TOLERANCE = 1e-9
STEPS = 3

ROBOTS: dict[str, Callable[[], mujoco.MjModel]] = {
    "arm7": lambda: builtin_model("arm7"),
    "humanoid": lambda: builtin_model("humanoid"),
    "tiny": lambda: mujoco.MjModel.from_xml_string(TINY_XML),
    "coupled": lambda: mujoco.MjModel.from_xml_string(COUPLED_XML),
    "g1": lambda: menagerie_model("g1"),
    "aloha": lambda: menagerie_model("aloha"),
}


def _plan(stack: Stack, configuration: posekit.Configuration) -> Plan:
    return plan_for(
        configuration, stack.tasks, stack.dt, stack.damping, stack.limits,
        stack.constraints or None,
    )  # fmt: skip


def _reference(stack: Stack, configuration: posekit.Configuration) -> np.ndarray:
    """‖compute_error‖ per task in the plan's order; NaN for a task without an error."""
    return np.array(
        [
            np.linalg.norm(task.compute_error(configuration))
            if isinstance(task, posekit.Task)
            else np.nan
            for task in [*stack.tasks, *stack.constraints]
        ]
    )


def _agree(stack: Stack, configuration: posekit.Configuration) -> None:
    plan = _plan(stack, configuration)
    compiled = plan.error_norms()
    assert compiled is not None, plan.reason
    reference = _reference(stack, configuration)
    np.testing.assert_array_equal(np.isnan(compiled), np.isnan(reference))
    np.testing.assert_allclose(compiled, reference, rtol=0.0, atol=TOLERANCE, equal_nan=True)
    through_engine = error_norms(
        configuration, stack.tasks, stack.dt, stack.damping, stack.limits,
        stack.constraints or None,
    )  # fmt: skip
    np.testing.assert_array_equal(through_engine, compiled)


def _move_targets(
    stack: Stack, configuration: posekit.Configuration, rng: np.random.Generator
) -> None:
    """New targets near the current values, new weights: written in place, or patched."""
    for task in [*stack.tasks, *stack.constraints]:
        if isinstance(task, posekit.FrameTask):
            pose = task.transform_target_to_world
            assert pose is not None
            task.set_target(pose @ posekit.SE3.exp(rng.normal(scale=0.1, size=6)))
            task.set_position_cost(float(rng.uniform(0.1, 2.0)))
        elif isinstance(task, posekit.RelativeFrameTask):
            relative = task.transform_target_to_root
            assert relative is not None
            task.set_target(relative @ posekit.SE3.exp(rng.normal(scale=0.1, size=6)))
        elif isinstance(task, posekit.ComTask):
            task.set_target(configuration.data.subtree_com[1] + rng.normal(scale=0.05, size=3))
        elif isinstance(task, posekit.PostureTask) and not isinstance(task, posekit.DampingTask):
            task.set_target(random_configuration(configuration.model, rng))
            task.set_cost(float(rng.uniform(0.0, 1.0)))
        elif isinstance(task, posekit.LookAtTask | posekit.AxisAlignTask):
            task.set_target(rng.normal(size=3))
        if isinstance(task, posekit.Task):
            task.set_gain(float(rng.uniform(0.1, 1.0)))


@pytest.mark.parametrize("robot", list(ROBOTS))
def test_error_norms_are_compute_errors(robot: str) -> None:
    model = ROBOTS[robot]()
    rng = np.random.default_rng(sum(map(ord, robot)))
    kinds_seen: set[str] = set()
    for _ in range(8):
        configuration = posekit.Configuration(model, random_configuration(model, rng))
        stack = random_stack(configuration, rng)
        kinds_seen |= {type(task).__name__ for task in [*stack.tasks, *stack.constraints]}
        _agree(stack, configuration)  # before any step: the kinematics of update()
        for step in range(STEPS):
            try:
                velocity = stack.solve(configuration)
            except posekit.PosekitError:
                break
            configuration.integrate_inplace(velocity, stack.dt)
            _agree(stack, configuration)
            if step == 0:
                builds = _plan(stack, configuration).builds
                _move_targets(stack, configuration, rng)
                _agree(stack, configuration)
                assert _plan(stack, configuration).builds == builds  # patched, not rebuilt
    assert len(kinds_seen) >= 5  # the draws cover most kinds on every robot


@pytest.mark.parametrize("kind", list(MAKERS))
@pytest.mark.parametrize("role", ["objective", "constraint"])
def test_each_task_kind_alone(kind: str, role: str) -> None:
    """Every kind in each role it has, on the floating, coupled tiny model."""
    model = mujoco.MjModel.from_xml_string(TINY_XML)
    rng = np.random.default_rng(11)
    configuration = posekit.Configuration(model, random_configuration(model, rng))
    task = MAKERS[kind](configuration, rng)
    if role == "constraint" and not isinstance(task, posekit.Task):
        pytest.skip("a kinetic-energy task has no constraint form")
    posture = posekit.PostureTask(model, 1e-2)
    posture.set_target(random_configuration(model, rng))
    stack = Stack(damping=1e-3, limits=[posekit.ConfigurationLimit(model)])
    stack.tasks = [task, posture] if role == "objective" else [posture]
    stack.constraints = [task] if role == "constraint" else []  # type: ignore[list-item]
    _agree(stack, configuration)
    for _ in range(STEPS):
        try:
            velocity = stack.solve(configuration)
        except posekit.PosekitError:
            break
        configuration.integrate_inplace(velocity, stack.dt)
        _agree(stack, configuration)
    norms = _plan(stack, configuration).error_norms()
    assert norms is not None
    index = 0 if role == "objective" else 1
    if kind == "kinetic_energy":
        assert np.isnan(norms[index])
    elif kind in ("damping", "dof_freezing"):
        assert norms[index] == 0.0
    else:
        assert norms[index] > 0.0  # targets away from q: the comparison is not 0 == 0


class DoubledFrameTask(posekit.FrameTask):
    """A user-defined subclass: the compiled path cannot know its error."""

    def compute_error(self, configuration: posekit.Configuration) -> np.ndarray:
        return 2.0 * super().compute_error(configuration)


def test_no_norms_on_the_python_path() -> None:
    model = builtin_model("arm7")
    configuration = posekit.Configuration(model)
    custom = DoubledFrameTask("ee", "site", 1.0, 1.0)
    custom.set_target_from_configuration(configuration)
    posture = posekit.PostureTask(model, 1e-2)
    posture.set_target_from_configuration(configuration)
    assert error_norms(configuration, [custom, posture], 0.01) is None
    plan = plan_for(configuration, [custom, posture], 0.01)
    assert plan.reason is not None and plan.error_norms() is None
    assert error_norms(configuration, [posture], 0.01) is not None
    with posekit.using_engine("python"):
        assert error_norms(configuration, [posture], 0.01) is None
