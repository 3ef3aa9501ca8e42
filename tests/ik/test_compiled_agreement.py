r"""The compiled step agrees with the Python reference on random problems, robot by robot.

Every task kind (frame, relative frame, CoM, look-at, axis-align, equality, DoF
freezing, posture, damping, kinetic energy), as objective or hard constraint, and every
limit kind (configuration, velocity, free-joint velocity, collision avoidance) is drawn
with random parameters (:mod:`random_stacks`); the compiled path must actually be
taken, and both paths, solving the same configuration step after step, must give

- on well-posed problems, the same step :math:`\Delta q = v\,\Delta t` to 1e-9 (or
  the same error);
- on any problem, ill-conditioned ones included, the same QP (``H``, ``c``, bounds,
  rows) to rounding: there the solution itself moves with the order of the sums
  (condition numbers of 1e8-1e10 turn 1e-17 into 1e-9).
"""

from __future__ import annotations

from collections.abc import Callable

import mujoco
import numpy as np
import posekit
import pytest
from inline_models import COUPLED_XML, TINY_XML
from posekit.ik.qp import QuadraticProgram
from posekit.ik.solve import assemble_qp
from random_stacks import MAKERS, Stack, random_stack
from support.models import builtin_model, menagerie_model, random_configuration

TOLERANCE = 1e-9
STEPS = 4


def _sparse(xml: str) -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_string(
        xml.replace("<mujoco>", '<mujoco><option jacobian="sparse"/>', 1)
    )


ROBOTS: dict[str, Callable[[], mujoco.MjModel]] = {
    "arm7": lambda: builtin_model("arm7"),
    "humanoid": lambda: builtin_model("humanoid"),
    "tiny": lambda: mujoco.MjModel.from_xml_string(TINY_XML),
    "tiny_sparse": lambda: _sparse(TINY_XML),
    "coupled": lambda: mujoco.MjModel.from_xml_string(COUPLED_XML),
    "coupled_sparse": lambda: _sparse(COUPLED_XML),
    "ur5e": lambda: menagerie_model("ur5e"),
    "panda": lambda: menagerie_model("panda"),
    "g1": lambda: menagerie_model("g1"),
    "aloha": lambda: menagerie_model("aloha"),
}


def _outcome(stack: Stack, configuration: posekit.Configuration) -> np.ndarray | str:
    try:
        return stack.solve(configuration)
    except posekit.PosekitError as error:
        return f"{type(error).__name__}: {error}"


def _agree(
    stack: Stack, configuration: posekit.Configuration, compare_steps: bool = True
) -> np.ndarray | None:
    """Compare both paths at ``configuration``; the reference velocity, or None on error."""
    with posekit.using_engine("python"):
        reference = _outcome(stack, configuration)
    compiled = _outcome(stack, configuration)
    assert stack.plan(configuration).reason is None, stack.plan(configuration).reason
    if isinstance(reference, str) or isinstance(compiled, str):
        assert compiled == reference
        return None
    if compare_steps:
        np.testing.assert_allclose(
            compiled * stack.dt, reference * stack.dt, rtol=0.0, atol=TOLERANCE
        )
    _same_qp(stack.plan(configuration).last_qp(), stack, configuration)
    return reference


def _close(actual: np.ndarray | None, expected: np.ndarray | None, what: str) -> None:
    assert (actual is None) == (expected is None), what
    if actual is not None and expected is not None:
        scale = max(1.0, float(np.max(np.abs(expected[np.isfinite(expected)]), initial=0.0)))
        np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-12 * scale, err_msg=what)


def _same_qp(
    compiled: QuadraticProgram, stack: Stack, configuration: posekit.Configuration
) -> None:
    """The compiled step's QP is the Python path's, to rounding."""
    reference = assemble_qp(
        configuration, stack.tasks, stack.dt, stack.damping, stack.limits,
        stack.constraints or None,
    )  # fmt: skip
    _close(compiled.H, reference.H, "H")
    _close(compiled.c, reference.c, "c")
    for name in ("G", "h", "A", "b"):
        _close(getattr(compiled, name), getattr(reference, name), name)
    assert (compiled.bounds is None) == (reference.bounds is None)
    if compiled.bounds is not None and reference.bounds is not None:
        _close(compiled.bounds.lower, reference.bounds.lower, "lower bounds")
        _close(compiled.bounds.upper, reference.bounds.upper, "upper bounds")


@pytest.mark.parametrize("well_posed", [True, False], ids=["well_posed", "any"])
@pytest.mark.parametrize("robot", list(ROBOTS))
def test_random_stacks_agree(robot: str, well_posed: bool) -> None:
    model = ROBOTS[robot]()
    rng = np.random.default_rng(sum(map(ord, robot)) + well_posed)
    solved = 0
    for _ in range(12):
        configuration = posekit.Configuration(model, random_configuration(model, rng))
        stack = random_stack(configuration, rng, well_posed)
        for _ in range(STEPS):
            velocity = _agree(stack, configuration, compare_steps=well_posed)
            if velocity is None:
                break
            solved += 1
            configuration.integrate_inplace(velocity, stack.dt)
    assert solved >= 12 * STEPS // 2  # most problems are feasible: the test compares numbers


@pytest.mark.parametrize("kind", list(MAKERS))
@pytest.mark.parametrize("role", ["objective", "constraint"])
def test_each_task_kind_agrees_alone(kind: str, role: str) -> None:
    """One task of each kind, in each role it has, with every limit, on the floating tiny model."""
    model = mujoco.MjModel.from_xml_string(TINY_XML)
    rng = np.random.default_rng(7)
    configuration = posekit.Configuration(model, random_configuration(model, rng))
    task = MAKERS[kind](configuration, rng)
    if role == "constraint" and not isinstance(task, posekit.Task):
        pytest.skip("a kinetic-energy task has no constraint form")
    stack = Stack(
        damping=1e-3,
        limits=[
            posekit.ConfigurationLimit(model),
            posekit.VelocityLimit(model, {"elbow": 2.0, "ball": [1.0, 2.0, 3.0]}),
            posekit.FreeJointVelocityLimit(model, [1.0, 2.0, 3.0], 2.0),
        ],
    )
    posture = posekit.PostureTask(model, 1e-2)
    posture.set_target_from_configuration(configuration)
    stack.tasks = [task, posture] if role == "objective" else [posture]
    stack.constraints = [task] if role == "constraint" else []  # type: ignore[list-item]
    for _ in range(STEPS):
        velocity = _agree(stack, configuration)
        if velocity is None:
            break
        configuration.integrate_inplace(velocity, stack.dt)


def test_every_row_kind_is_compiled_and_agrees() -> None:
    """Ball-joint, free-joint, collision and equality rows all appear in one step."""
    model = mujoco.MjModel.from_xml_string(TINY_XML)
    q = model.qpos0.copy()
    ball = model.jnt_qposadr[model.joint("ball").id]
    q[ball : ball + 4] = [np.cos(0.7), np.sin(0.7), 0.0, 0.0]  # 1.4 rad of 1.5
    configuration = posekit.Configuration(model, q)
    rng = np.random.default_rng(3)
    frame = MAKERS["frame"](configuration, rng)
    geoms = [model.geom(g).id for g in range(model.ngeom)]
    stack = Stack(
        tasks=[frame, posekit.DampingTask(model, 1e-2)],
        constraints=[posekit.EqualityConstraintTask(model, 1.0)],
        limits=[
            posekit.ConfigurationLimit(model),
            posekit.FreeJointVelocityLimit(model, [1.0, 2.0, 3.0], 2.0),
            posekit.CollisionAvoidanceLimit(
                model, [(geoms, geoms)], collision_detection_distance=0.5,
                minimum_distance_from_collisions=0.0,
            ),
        ],
        damping=1e-3,
    )  # fmt: skip
    assert _agree(stack, configuration) is not None
    qp = stack.plan(configuration).last_qp()
    assert qp.G is not None and qp.A is not None and qp.bounds is not None
    ball_dofs = slice(
        model.jnt_dofadr[model.joint("ball").id], model.jnt_dofadr[model.joint("ball").id] + 3
    )
    assert np.any(np.all(qp.G[:, ball_dofs] != 0.0, axis=1))  # the ball row
    assert qp.G.shape[0] >= 1 + 6 + 1  # ball, 6 free-joint rows, at least one pair
    assert qp.A.shape[0] == 3 + 1  # the connect (3) and joint (1) equalities
