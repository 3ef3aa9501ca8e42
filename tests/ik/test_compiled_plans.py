"""Compiled plans: built once, patched in place, rebuilt on structure, and the fallbacks."""

from __future__ import annotations

import numpy as np
import posekit
import pytest
from posekit.ik.compiled import engine as compiled_engine
from posekit.ik.compiled.engine import plan_for
from posekit.ik.compiled.plan import Plan
from support.arm_problem import ARM, Problem, arm_problem

DT = 0.01


def _problem() -> Problem:
    return arm_problem((0.05, 0.0, -0.05))


def _both(configuration: posekit.Configuration, tasks: list, limits: list) -> tuple:
    compiled = posekit.solve_ik(configuration, tasks, DT, "daqp", limits=limits)
    with posekit.using_engine("python"):
        reference = posekit.solve_ik(configuration, tasks, DT, "daqp", limits=limits)
    return compiled, reference


def test_targets_and_weights_update_the_plan_in_place() -> None:
    configuration, tasks, limits = _problem()
    hand, posture = tasks
    posekit.solve_ik(configuration, tasks, DT, "daqp", limits=limits)
    plan = plan_for(configuration, tasks, DT, limits=limits)
    builds = plan.builds
    changes = [
        lambda: hand.set_target(posekit.SE3.from_translation(np.array([0.3, 0.1, 0.4]))),
        lambda: hand.set_position_cost([1.0, 0.5, 2.0]),
        lambda: hand.set_orientation_cost(0.1),
        lambda: hand.set_gain(0.5),
        lambda: setattr(hand, "lm_damping", 1e-3),
        lambda: posture.set_cost(0.3),
        lambda: posture.set_target(ARM.qpos0 + 0.2),
        lambda: hand.cost.__setitem__(2, 7.0),  # in place: read through the record's pointer
        lambda: setattr(limits[0], "gain", 0.5),
    ]
    for change in changes:
        change()
        compiled, reference = _both(configuration, tasks, limits)
        np.testing.assert_allclose(compiled * DT, reference * DT, atol=1e-12)
        assert plan_for(configuration, tasks, DT, limits=limits) is plan
    assert plan.builds == builds  # patched, never rebuilt


def test_a_new_structure_gets_its_own_plan() -> None:
    configuration, tasks, limits = _problem()
    first = plan_for(configuration, tasks, DT, limits=limits)
    look = posekit.LookAtTask("wrist_cam", "site", cost=0.1)
    look.set_target([0.5, 0.2, 0.0])
    for other in (
        plan_for(configuration, [*tasks, look], DT, limits=limits),
        plan_for(configuration, tasks, 0.02, limits=limits),
        plan_for(configuration, tasks, DT, damping=1e-3, limits=limits),
        plan_for(configuration, tasks, DT, limits=limits[:1]),
        plan_for(configuration, tasks[:1], DT, limits=limits, constraints=tasks[1:]),
    ):
        assert other is not first and other.reason is None
    compiled, reference = _both(configuration, [*tasks, look], limits)
    np.testing.assert_allclose(compiled * DT, reference * DT, atol=1e-12)


def test_a_change_of_shape_rebuilds_the_plan() -> None:
    configuration = posekit.Configuration(ARM)
    frozen = posekit.DofFreezingTask(ARM, [0])
    posture = posekit.PostureTask(ARM, 1e-2)
    posture.set_target(ARM.qpos0 + 0.3)
    tasks = [posture, frozen]
    posekit.solve_ik(configuration, tasks, DT, "daqp")
    plan = plan_for(configuration, tasks, DT)
    frozen.dof_indices = [0, 3]  # two rows instead of one
    compiled = posekit.solve_ik(configuration, tasks, DT, "daqp")
    with posekit.using_engine("python"):
        reference = posekit.solve_ik(configuration, tasks, DT, "daqp")
    np.testing.assert_allclose(compiled, reference, atol=1e-12)
    with posekit.using_engine("python"):
        fresh = [posture, posekit.DofFreezingTask(ARM, [0, 3])]
        np.testing.assert_allclose(compiled, posekit.solve_ik(configuration, fresh, DT, "daqp"))
    assert plan.builds == 2


class ScaledFrameTask(posekit.FrameTask):
    """A user-defined subclass: the compiled path cannot know its math."""

    def compute_error(self, configuration: posekit.Configuration) -> np.ndarray:
        return 2.0 * super().compute_error(configuration)


def test_a_user_defined_task_takes_the_python_path_and_says_so() -> None:
    configuration, tasks, limits = _problem()
    custom = ScaledFrameTask("ee", "site", 1.0, 1.0)
    custom.set_target_from_configuration(configuration)
    stack = [*tasks, custom]
    reason = posekit.fallback_reason(configuration, stack, DT, limits=limits)
    assert reason is not None and "ScaledFrameTask" in reason
    compiled_engine.forget_warnings()
    with pytest.warns(posekit.CompiledFallbackWarning, match="ScaledFrameTask"):
        velocity = posekit.solve_ik(configuration, stack, DT, "daqp", limits=limits)
    with posekit.using_engine("python"):
        reference = posekit.solve_ik(configuration, stack, DT, "daqp", limits=limits)
    np.testing.assert_array_equal(velocity, reference)


def test_other_solvers_settings_and_the_python_engine_are_reported() -> None:
    configuration, tasks, limits = _problem()
    assert posekit.fallback_reason(configuration, tasks, DT, limits=limits) is None
    assert "daqp only" in str(posekit.fallback_reason(configuration, tasks, DT, "quadprog"))
    assert "iter_limit" in str(
        posekit.fallback_reason(configuration, tasks, DT, "daqp", iter_limit=50)
    )
    with posekit.using_engine("python"):
        assert "python" in str(posekit.fallback_reason(configuration, tasks, DT))
    compiled, reference = _both(configuration, tasks, limits)
    np.testing.assert_allclose(compiled, reference, atol=1e-12)


def test_an_array_the_kernel_cannot_point_at_falls_back_until_fixed() -> None:
    configuration, tasks, limits = _problem()
    hand = tasks[0]
    hand.cost = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]  # a list: fine for NumPy, not a buffer
    reason = posekit.fallback_reason(configuration, tasks, DT, limits=limits)
    assert reason is not None and "FrameTask.cost" in reason
    with pytest.warns(posekit.CompiledFallbackWarning):
        compiled_engine.forget_warnings()
        velocity = posekit.solve_ik(configuration, tasks, DT, "daqp", limits=limits)
    hand.cost = np.ones(6)  # a float64 buffer again
    assert posekit.fallback_reason(configuration, tasks, DT, limits=limits) is None
    with posekit.using_engine("python"):
        np.testing.assert_array_equal(
            velocity, posekit.solve_ik(configuration, tasks, DT, "daqp", limits=limits)
        )


def test_errors_are_the_python_paths() -> None:
    configuration, tasks, _ = _problem()
    unset = posekit.ComTask(1.0)
    absent = posekit.FrameTask("no_such_site", "site", 1.0, 1.0)
    absent.set_target(posekit.SE3.identity())
    calls = (
        lambda: posekit.solve_ik(configuration, [*tasks, unset], DT, "daqp"),
        lambda: posekit.solve_ik(configuration, [*tasks, absent], DT, "daqp"),
        lambda: posekit.solve_ik(configuration, tasks, -1.0, "daqp"),
        lambda: posekit.solve_ik(configuration, tasks, DT, "daqp", damping=float("nan")),
        lambda: posekit.solve_ik(configuration, tasks[:1], DT, "daqp", constraints=[unset]),
    )
    errors: dict[str, list[tuple[type, str]]] = {"compiled": [], "python": []}
    for name, found in errors.items():
        with posekit.using_engine(name):
            for call in calls:
                with pytest.raises(posekit.PosekitError) as caught:
                    call()
                found.append((type(caught.value), str(caught.value)))
    assert errors["compiled"] == errors["python"]
    assert [kind for kind, _ in errors["compiled"]] == [
        posekit.TargetNotSet,
        posekit.InvalidFrame,
        posekit.InvalidSolverSettings,
        posekit.InvalidSolverSettings,
        posekit.TargetNotSet,
    ]


def test_an_infeasible_step_raises_no_solution_found_like_the_python_path() -> None:
    configuration, tasks, limits = _problem()
    hand = tasks[0]
    far = posekit.SE3.from_translation(np.array([5.0, 0.0, 0.0]))
    hand.set_target(far)
    hard = [posekit.FrameTask("ee", "site", 1.0, 1.0)]
    hard[0].set_target(far)
    messages = []
    for name in ("compiled", "python"):
        with posekit.using_engine(name), pytest.raises(posekit.NoSolutionFound) as caught:
            posekit.solve_ik(configuration, tasks, DT, "daqp", limits=limits, constraints=hard)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


def test_plans_leave_with_their_configuration() -> None:
    import gc
    import weakref

    configuration, tasks, limits = _problem()
    posekit.solve_ik(configuration, tasks, DT, "daqp", limits=limits)
    plan = weakref.ref(plan_for(configuration, tasks, DT, limits=limits))
    assert plan() is not None
    del configuration
    gc.collect()
    assert plan() is None


def test_a_plan_observes_its_objects_weakly() -> None:
    import gc
    import weakref

    configuration, tasks, limits = _problem()
    plan = Plan(configuration.model, configuration.data, tasks, limits, [], DT, 1e-12)
    watcher = weakref.ref(plan)
    del plan
    gc.collect()
    assert watcher() is None
    tasks[0].set_gain(0.5)  # no observer left: nothing to notify, nothing raised
