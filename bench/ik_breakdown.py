"""Where a compiled IK step's time goes, scenario by scenario (``bench/ik_step.py``'s).

For each scenario, prints in µs per step (loops run inside compiled code, so without
Python):

- ``fk``: ``mj_kinematics`` + ``mj_comPos`` (what ``integrate_inplace`` runs after
  ``mj_integratePos``);
- ``tasks``: every task's rows (MuJoCo Jacobians, errors, maps) and ``H``, ``c``;
- ``limits+qp``: the bounds and rows of the limits (collision distances included) and
  the daqp solve; ``daqp`` alone on the same problem;
- ``kernel``: the whole compiled step (``tasks`` + ``limits+qp``);
- ``step``: the median of a full step as ``bench/ik_step.py`` times it (move the
  targets, ``solve_ik``, ``integrate_inplace``), and ``python`` = ``step - kernel - fk``:
  the interpreter's share (the scenario's target moves, SE3 arithmetic, call overhead);
- ``guessed %``: the steps whose QP was solved on the last step's active set, without
  daqp (``Plan.guessed``). ``limits+qp`` repeats one step's QP, so it times the guess
  where that step was guessed and daqp where it was not.

Stages are timed every 30 steps along 600 steps of the scenario's trajectory (daqp's
iterations change with the active bounds) and their medians printed.

The floor of a step is ``fk + kernel``: MuJoCo's and daqp's C time plus the compiled
assembly.

    python bench/ik_breakdown.py [--only S1,S3]
"""

from __future__ import annotations

import argparse
import time
import timeit
from collections.abc import Callable

import numpy as np
import posekit
from ik_step import DT, SCENARIOS, Problem
from numba import njit
from posekit.ik.compiled import daqp_call
from posekit.ik.compiled import header as h
from posekit.ik.compiled.engine import plan_for
from posekit.ik.compiled.native import call_v_pp, floats
from posekit.ik.compiled.objective_kernel import objective
from posekit.ik.compiled.plan import Plan
from posekit.ik.compiled.qp_kernel import solve_qp
from posekit.ik.compiled.step_kernel import run_step
from posekit.ik.compiled.symbols import FN_COM_POS, FN_KINEMATICS


@njit(cache=True)
def _fk(ints: np.ndarray, repeats: int) -> None:
    for _ in range(repeats):
        call_v_pp(ints[h.H_FN + FN_KINEMATICS], ints[h.H_MODEL], ints[h.H_DATA])
        call_v_pp(ints[h.H_FN + FN_COM_POS], ints[h.H_MODEL], ints[h.H_DATA])


@njit(cache=True)
def _tasks(ints: np.ndarray, repeats: int) -> None:
    scalars = floats(ints[h.H_FLOATS], ints[h.H_NFLOATS])
    work = floats(ints[h.H_WORK], ints[h.H_NWORK])
    for _ in range(repeats):
        ints[h.H_EFC_READY] = 0
        objective(ints, scalars, work)


@njit(cache=True)
def _limits_qp(ints: np.ndarray, repeats: int) -> None:
    scalars = floats(ints[h.H_FLOATS], ints[h.H_NFLOATS])
    work = floats(ints[h.H_WORK], ints[h.H_NWORK])
    for _ in range(repeats):
        solve_qp(ints, scalars, work)


@njit(cache=True)
def _daqp(ints: np.ndarray, repeats: int, matrix: int, vectors: tuple) -> None:
    bounds = ints[h.H_NV] if ints[h.H_HAVE_BOUNDS] else 0
    rows = ints[h.H_ROWS_G] + ints[h.H_ROWS_A]
    for _ in range(repeats):
        daqp_call.solve(ints, bounds, rows, matrix, vectors)


@njit(cache=True)
def _kernel(ints: np.ndarray, velocity: np.ndarray, repeats: int) -> None:
    for _ in range(repeats):
        run_step(ints, velocity)


def _per_call(run: Callable[[int], None], repeats: int = 50) -> float:
    run(2)
    return min(timeit.repeat(lambda: run(repeats), number=1, repeat=3)) / repeats * 1e6


def _plan(problem: Problem) -> Plan:
    return plan_for(
        problem.configuration, problem.tasks, DT, limits=problem.limits,
        constraints=problem.constraints or None,
    )  # fmt: skip


def _stages(problem: Problem) -> dict[str, float]:
    """Each stage's time at the problem's current state."""
    plan = _plan(problem)
    ints = plan.header()
    area = plan.qp_addresses()  # rows, then daqp's (bupper, blower, sense, lam)
    velocity = np.zeros(problem.configuration.nv)
    return {
        "fk": _per_call(lambda n: _fk(ints, n)),
        "tasks": _per_call(lambda n: _tasks(ints, n)),
        "limits+qp": _per_call(lambda n: _limits_qp(ints, n)),
        "daqp": _per_call(lambda n: _daqp(ints, n, area[0], area[1:])),
        "kernel": _per_call(lambda n: _kernel(ints, velocity, n)),
    }


def breakdown(key: str, steps: int = 600, every: int = 30) -> dict[str, float]:
    """Medians along ``steps`` steps of the scenario: stages every ``every`` steps, and
    the full step as ``bench/ik_step.py`` times it."""
    problem = SCENARIOS[key][1](posekit)
    configuration = problem.configuration
    samples: dict[str, list[float]] = {}
    times = []
    guessed = 0
    for step in range(steps):
        start = time.perf_counter()
        problem.move_targets(step)
        velocity = posekit.solve_ik(
            configuration, problem.tasks, DT, "daqp", limits=problem.limits,
            constraints=problem.constraints or None,
        )  # fmt: skip
        configuration.integrate_inplace(velocity, DT)
        times.append(time.perf_counter() - start)
        guessed += _plan(problem).guessed
        if step % every == every - 1:
            for name, value in _stages(problem).items():
                samples.setdefault(name, []).append(value)
    figures = {name: float(np.median(values)) for name, values in samples.items()}
    figures["step"] = float(np.median(times[every:])) * 1e6
    figures["python"] = figures["step"] - figures["kernel"] - figures["fk"]
    figures["guessed %"] = 100.0 * guessed / steps
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated scenario ids")
    args = parser.parse_args()
    chosen = [s.strip() for s in args.only.split(",") if s.strip()] or list(SCENARIOS)
    names = ("fk", "tasks", "limits+qp", "daqp", "kernel", "step", "python", "guessed %")
    print(f"{'':4}" + "".join(f"{name:>11}" for name in names) + "   (µs per step)")
    for key in chosen:
        figures = breakdown(key)
        print(f"{key:4}" + "".join(f"{figures[name]:11.1f}" for name in names))


if __name__ == "__main__":
    main()
