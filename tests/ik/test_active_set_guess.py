"""The compiled QP solved on the guessed active set: taken only when that is the QP's
solution (and daqp's to rounding), and daqp otherwise."""

from __future__ import annotations

import numpy as np
import posekit
import pytest
from posekit.ik.compiled import active_set_guess as guess
from posekit.ik.compiled import header as h
from posekit.ik.compiled import symbols
from posekit.ik.compiled.engine import plan_for
from support.models import builtin_model

ARM = builtin_model("arm7")
DT = 0.01
TOLERANCE = 1e-6  # daqp's default primal_tol


def _spd(rng: np.random.Generator, n: int) -> np.ndarray:
    root = rng.normal(size=(n, n))
    return root @ root.T + 0.1 * np.eye(n)


def _solve(
    hessian: np.ndarray, gradient: np.ndarray, side: np.ndarray, lower: np.ndarray,
    upper: np.ndarray,
) -> np.ndarray | None:  # fmt: skip
    """The guess's candidate when it is optimal, as the kernel computes it (bounds only)."""
    n = gradient.shape[0]
    x, free = np.zeros(n), np.zeros(n, dtype=np.int64)
    factor, reduced = np.zeros((n, n)), np.zeros(n)
    count = guess.hold(x, side, free, n, lower, upper)
    guess.reduce(hessian, gradient, x, free, count, factor, reduced)
    if not guess.cholesky(factor, count, reduced):
        return None
    guess.back_substitute(factor, reduced, count)
    x[free[:count]] = reduced[:count]
    no_rows = np.zeros((0, n))
    optimal = guess.optimal(
        hessian, gradient, x, side, n, lower, upper, no_rows, np.zeros(0), 0, TOLERANCE
    )
    return x if optimal else None


@pytest.mark.parametrize("n", [1, 2, 7, 35, 48])
def test_the_empty_guess_is_the_unconstrained_minimiser(n: int) -> None:
    rng = np.random.default_rng(n)
    for _ in range(5):
        hessian, gradient = _spd(rng, n), rng.normal(size=n)
        free = np.full(n, np.inf)
        x = _solve(hessian, gradient, np.zeros(n), -free, free)
        assert x is not None
        np.testing.assert_allclose(x, np.linalg.solve(hessian, -gradient), rtol=1e-10, atol=1e-12)


def test_a_held_bound_is_taken_only_with_a_clear_multiplier() -> None:
    hessian, lower, upper = np.diag([2.0, 1.0]), np.array([-1.0, -1.0]), np.array([1.0, 1.0])
    held = np.array([1.0, 0.0])  # x0 held at its upper bound
    # Unconstrained x0 = 3: held at 1 with multiplier g0 = 2 * 1 - 6 = -4 (pushing up).
    x = _solve(hessian, np.array([-6.0, 0.5]), held, lower, upper)
    assert x is not None
    np.testing.assert_array_equal(x, [1.0, -0.5])
    # Unconstrained x0 = 1 + 5e-7: releasing it would violate the bound by less than
    # daqp's tolerance, which daqp may accept: the guess is refused.
    assert _solve(hessian, np.array([-2.0 - 1e-6, 0.5]), held, lower, upper) is None
    # Unconstrained x0 = 0.5: the bound does not hold it (wrong sign).
    assert _solve(hessian, np.array([-1.0, 0.5]), held, lower, upper) is None
    # The free variable leaves its bounds: refused.
    assert _solve(hessian, np.array([-6.0, 3.0]), held, lower, upper) is None


@pytest.mark.parametrize(
    "hessian",
    [
        np.zeros((3, 3)),
        np.diag([1.0, 1.0, 0.0]),  # singular
        np.diag([1.0, 1e-12, 1.0]),  # positive definite but too ill-conditioned
        np.array([[1.0, 2.0], [2.0, 1.0]]),  # indefinite
        np.array([[np.nan, 0.0], [0.0, 1.0]]),
    ],
)
def test_a_hessian_that_does_not_factor_well_is_left_to_daqp(hessian: np.ndarray) -> None:
    n = hessian.shape[0]
    assert not guess.cholesky(hessian.copy(), n, np.zeros(n))


def test_the_next_guess_is_where_the_solution_sits_on_a_bound() -> None:
    side = np.zeros(4)
    lower, upper = np.array([-1.0, -np.inf, 0.0, -2.0]), np.array([1.0, np.inf, 0.0, 2.0])
    guess.record(np.array([-1.0, 5.0, 0.0, 2.0 - 1e-9]), side, 4, lower, upper)
    np.testing.assert_array_equal(side, [-1.0, 0.0, -1.0, 0.0])
    guess.record(np.array([-1.0, 5.0, 0.0, 2.0]), side, 0, lower, upper)  # no bounds
    np.testing.assert_array_equal(side, np.zeros(4))


def test_backoff_after_failures_with_rows() -> None:
    assert [guess.backoff(m, 2) for m in range(1, 8)] == [0, 1, 3, 7, 15, 15, 15]


def test_no_backoff_with_bounds_only() -> None:
    assert [guess.backoff(m, 0) for m in range(1, 8)] == [0] * 7


def test_the_out_slots_do_not_overlap_the_function_table() -> None:
    slots = [h.H_GUESSED, h.H_GUESS_SKIP, h.H_GUESS_MISSES, h.H_FREE]
    assert h.H_FN + symbols.FUNCTION_COUNT <= min(slots) and max(slots) < h.W_H
    assert len(set(slots)) == len(slots)


def _arm(offset: list[float]) -> tuple[posekit.Configuration, list, list]:
    configuration = posekit.Configuration(ARM)
    configuration.update_from_keyframe("home")
    hand = posekit.FrameTask("ee", "site", 1.0, 1.0, lm_damping=1e-6)
    hand.set_target(
        posekit.SE3.from_translation(np.array(offset))
        @ configuration.get_transform_frame_to_world("ee", "site")
    )
    posture = posekit.PostureTask(ARM, 1e-2)
    posture.set_target_from_configuration(configuration)
    limits = [posekit.ConfigurationLimit(ARM), posekit.VelocityLimit(ARM, {"joint1": 0.5})]
    return configuration, [hand, posture], limits


def _steps(offset: list[float], count: int) -> tuple[list[bool], list[float]]:
    """Steps towards a target ``offset`` away: whether each was guessed, and joint1's
    speed. Every step's answer is the Python path's (daqp) to 1e-12."""
    configuration, tasks, limits = _arm(offset)
    guessed, speeds = [], []
    for _ in range(count):
        compiled = posekit.solve_ik(configuration, tasks, DT, "daqp", limits=limits)
        guessed.append(plan_for(configuration, tasks, DT, limits=limits).guessed)
        speeds.append(abs(float(compiled[0])))
        with posekit.using_engine("python"):
            reference = posekit.solve_ik(configuration, tasks, DT, "daqp", limits=limits)
        np.testing.assert_allclose(compiled * DT, reference * DT, rtol=0, atol=1e-12)
        configuration.integrate_inplace(compiled, DT)
    return guessed, speeds


def test_a_small_move_is_solved_without_daqp() -> None:
    guessed, speeds = _steps([0.001, 0.0, -0.001], 3)
    assert guessed == [True, True, True]
    assert max(speeds) < 0.5


def test_a_joint_reaching_its_speed_limit_is_held_by_a_correction_then_guessed() -> None:
    """The first step guesses nothing held; its candidate moves joint1 past its speed
    limit, so the correction holds it there and solves again (no daqp call); the next
    steps start from that guess. Every answer is daqp's to 1e-12 (``_steps``)."""
    guessed, speeds = _steps([0.0, 0.1, 0.0], 4)
    assert guessed == [True, True, True, True]
    assert speeds == pytest.approx([0.5] * 4)


def _correct(side: list[float], x: list[float], gradient: list[float]) -> tuple[bool, list[float]]:
    hessian = np.diag([2.0, 1.0, 4.0])
    lower, upper = np.array([-1.0, -1.0, -1.0]), np.array([1.0, 1.0, 1.0])
    corrected = np.array(side)
    changed = guess.correct(
        hessian, np.array(gradient), np.array(x), corrected, lower, upper, TOLERANCE
    )
    return changed, corrected.tolist()


def test_a_correction_holds_crossed_bounds_and_frees_wrong_multipliers() -> None:
    # x0 crossed its upper bound, x1 its lower one: both held there; x2 stays free.
    assert _correct([0.0, 0.0, 0.0], [1.5, -2.0, 0.3], [0.0, 0.0, 0.0]) == (
        True, [1.0, -1.0, 0.0],
    )  # fmt: skip
    # x0 held at its upper bound, g0 = 2·1 + 1 = 3 > 0 pushes it down, inside: freed.
    assert _correct([1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]) == (
        True, [0.0, 0.0, 0.0],
    )  # fmt: skip


def test_a_correction_leaves_unclear_or_unchanged_guesses_to_daqp() -> None:
    # g0 = 2·1 - 2 = 0: the multiplier is within the margin, daqp decides.
    assert _correct([1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [-2.0, 0.0, 0.0])[0] is False
    # Nothing crossed, the held multiplier is right (g0 = 2 - 6 = -4 pushes up): no change.
    assert _correct([1.0, 0.0, 0.0], [1.0, 0.5, 0.0], [-6.0, 0.0, 0.0])[0] is False


def test_the_tolerance_read_from_daqps_settings_is_its_primal_tol() -> None:
    """The guess reads ``primal_tol`` as the first double of ``DAQPSettings``."""
    settings = symbols.native_libraries().daqp_settings
    assert np.frombuffer(settings[:8], dtype=np.float64)[0] == TOLERANCE
