"""One solve step, pure: a plan and a configuration in, the configuration moved and the
outcome out (the hot path of every session).

The step solves ``v = solve_ik(...)`` with the plan's objectives, its constraint tasks as
hard equalities ``J Δq = −α e`` and its limits. When ``max_i |v_i| dt < tolerance`` the
configuration is a fixed point and does not move (``converged``); otherwise
``q ← q ⊕ v dt``. A failed solve (infeasible constraints, a non-finite solution or
configuration) leaves q as it was and reports why: non-finite values never reach q.

Then every task's error norm ``‖e‖`` at the new q: one compiled call on the compiled
engine (:func:`posekit.ik.compiled.engine.error_norms`, from the plan the step just
used), each task's ``compute_error`` otherwise (:func:`task_errors`); a task that weighs
only some components of its error (cost 0 on the others) reports the norm of those
(:func:`weighed`).

On the compiled engine the whole step — solve, the tolerance test, the integration and
the norms — is one call (:meth:`~posekit.ik.compiled.plan.Plan.advance`); a step it
does not finish (no solution, a non-finite q) is taken again by the road above, which
says why.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import mujoco
import numpy as np

from posekit.ik.compiled.advance_kernel import ADVANCED, CONVERGED, Q_NOT_FINITE
from posekit.ik.compiled.engine import error_norms, plan_for
from posekit.ik.compiled.plan import Plan as CompiledPlan
from posekit.ik.compiled.selection import ENGINE
from posekit.ik.configuration import Configuration
from posekit.ik.exceptions import NoSolutionFound, PosekitError
from posekit.ik.limits import Limit
from posekit.ik.solve import solve_ik, solve_python
from posekit.ik.tasks import BaseTask, Task
from posekit.sessions.live.binding import LimitWatch
from posekit.sessions.live.state import Status
from posekit.sessions.specs.solver_settings import SolverSettings


@dataclass(frozen=True)
class Plan:
    """The enabled engine objects of a task stack, by role."""

    objectives: list[BaseTask]
    constraints: list[Task]
    limits: list[Limit]
    error_tasks: list[tuple[str, Task]]
    """Tasks whose error norm is reported, by name."""
    silent: list[str]
    """Tasks reported with a None error (disabled, or without an error vector)."""
    names: list[str]
    """Every task's name, in stack order (the order of the reported errors)."""
    limit_names: list[str] = field(default_factory=list)
    """The name of each limit of ``limits``."""
    error_slots: list[int] = field(init=False)
    """Per name, the index of its norm in ``error_norms``'s answer (objectives, then
    constraints); tasks reported with a None error point past its end."""

    compiled: list[tuple[tuple[object, ...], CompiledPlan]] = field(
        init=False, default_factory=list, repr=False, compare=False
    )
    """The compiled engine's plan of the last step, with its key (:func:`_compiled_plan`)."""
    _watch: LimitWatch | None = field(init=False, default=None, repr=False, compare=False)
    partial: list[tuple[str, Task, np.ndarray]] = field(init=False)
    """Tasks that weigh only some of their error's components (a position-only frame
    task, a posture task with joints at cost 0), with the mask of those components."""

    def watch(self, model: mujoco.MjModel) -> LimitWatch:
        """Which of its limits bind after a step (built on first use)."""
        if self._watch is None:
            names = self.limit_names or [type(limit).__name__ for limit in self.limits]
            watch = LimitWatch(model, list(zip(names, self.limits, strict=True)))
            object.__setattr__(self, "_watch", watch)
        assert self._watch is not None
        return self._watch

    def __post_init__(self) -> None:
        ordered = [*self.objectives, *self.constraints]
        position = {id(task): index for index, task in enumerate(ordered)}
        reported = {name: position[id(task)] for name, task in self.error_tasks}
        slots = [reported.get(name, len(ordered)) for name in self.names]
        object.__setattr__(self, "error_slots", slots)
        object.__setattr__(self, "partial", _partial_tasks(self.error_tasks))


Settings = SolverSettings
"""What a step reads its settings from."""


def _partial_tasks(tasks: list[tuple[str, Task]]) -> list[tuple[str, Task, np.ndarray]]:
    partial = []
    for name, task in tasks:
        cost = np.asarray(getattr(task, "cost", 1.0), dtype=float)
        if cost.ndim == 1 and 0 < np.count_nonzero(cost) < cost.size:
            partial.append((name, task, cost != 0))
    return partial


def weighed(plan: Plan, configuration: Configuration, errors: dict[str, float | None]) -> None:
    """Report, for each task that weighs only some components of its error, the norm of
    those (a position-only fingertip's shortfall is its position error, not its
    orientation's), in place."""
    for name, task, mask in plan.partial:
        try:
            vector = task.compute_error(configuration)
            if vector.shape == mask.shape:
                errors[name] = float(np.linalg.norm(vector[mask]))
        except (PosekitError, ArithmeticError, ValueError):
            errors[name] = None


class StepOutcome(NamedTuple):
    """What a step did: ``running`` (q moved), ``converged`` (q kept) or ``failed``."""

    status: Status
    error: str | None
    solve_us: float
    """Wall time of the solve, the integration and the error norms [µs]."""
    errors: dict[str, float | None]
    """Task name → ‖e‖ after the step, in stack order (:func:`step_errors`)."""
    q: list[float]
    """The configuration after the step (the list the state publishes)."""


def solve_step(plan: Plan, configuration: Configuration, settings: Settings) -> StepOutcome:
    """Solve one step of ``plan`` and integrate it into ``configuration`` (module docstring)."""
    start = time.perf_counter()
    compiled = _compiled_plan(plan, configuration, settings, settings.step_dt)
    if compiled is not None:
        outcome = compiled.advance(settings.tolerance)
        if outcome == ADVANCED or outcome == CONVERGED:
            if outcome == ADVANCED:
                configuration.kinematics_changed()
            status: Status = "running" if outcome == ADVANCED else "converged"
            errors = _named_norms(plan, compiled.last_norms(), configuration)
            q = configuration.data.qpos.tolist()
            return StepOutcome(status, None, (time.perf_counter() - start) * 1e6, errors, q)
        if outcome == Q_NOT_FINITE:
            configuration.kinematics_changed()
    return _solve_step_again(plan, configuration, settings, start)


def _solve_step_again(
    plan: Plan, configuration: Configuration, settings: Settings, start: float
) -> StepOutcome:
    """:func:`solve_step` call by call: on the Python engine, and for a step the compiled
    call did not finish (it failed, or the plan is not compiled), so that the reason is
    found and reported. ``start`` is the step's :func:`time.perf_counter` at its start."""
    dt = settings.step_dt
    status: Status = "running"
    error = None
    compiled = None
    before = configuration.data.qpos.copy()
    try:
        compiled = _compiled_plan(plan, configuration, settings, dt)
        velocity = compiled.solve() if compiled is not None else None
        if velocity is None:
            velocity = _solve_again(plan, configuration, settings, compiled)
        if not np.isfinite(velocity).all():
            raise NoSolutionFound(settings.solver, "the solution is not finite")
        if velocity.size == 0 or np.abs(velocity).max() * dt < settings.tolerance:
            status = "converged"
        else:
            configuration.integrate_inplace(velocity, dt)
            if not np.isfinite(configuration.data.qpos).all():
                configuration.update(before)
                raise NoSolutionFound(settings.solver, "integration gave a non-finite q")
    except PosekitError as exc:
        status, error = "failed", str(exc)
    except (ArithmeticError, ValueError, np.linalg.LinAlgError) as exc:
        status, error = "failed", f"{type(exc).__name__}: {exc}"
    if status == "failed":
        errors = task_errors(plan, configuration)
    else:
        errors = step_errors(plan, configuration, settings, compiled)
    q = configuration.data.qpos.tolist()
    return StepOutcome(status, error, (time.perf_counter() - start) * 1e6, errors, q)


def _compiled_plan(
    plan: Plan, configuration: Configuration, settings: Settings, dt: float
) -> CompiledPlan | None:
    """The compiled engine's plan of this step's ``solve_ik`` call, or None when that
    call takes the Python path by choice (another solver, the ``python`` engine).

    The engine finds it again on every call by a key of the tasks, limits and
    constraints (lists copied into tuples); here the key is the identity of ``plan``
    (its lists are never changed: a structural change makes a new plan), the
    configuration and the step's ``dt`` (``settings.step_dt``) and ``damping``, kept on
    ``plan``: about 5 µs
    less a step. The plan is the engine's own (:func:`plan_for`), so numbers are the same.
    """
    if settings.solver != "daqp" or ENGINE[0] != "compiled":
        return None
    key = (configuration, configuration.data, configuration.model, dt, settings.damping)
    cached = plan.compiled
    if cached and cached[0][0] == key:
        return cached[0][1]
    found = plan_for(
        configuration,
        plan.objectives,
        dt,
        settings.damping,
        plan.limits,
        plan.constraints or None,
    )
    cached[:] = [(key, found)]
    return found


def _solve_again(
    plan: Plan,
    configuration: Configuration,
    settings: Settings,
    compiled: CompiledPlan | None,
) -> np.ndarray:
    """The velocity of a step the compiled plan did not solve: ``solve_ik`` when the
    plan cannot be compiled (it warns why) or the Python path was chosen; its Python
    path alone when daqp found no solution (as ``solve_ik`` would, without solving
    the compiled step a second time)."""
    arguments = (configuration, plan.objectives, settings.step_dt, settings.solver)
    if compiled is not None and compiled.reason is None:
        return solve_python(*arguments, settings.damping, plan.limits, plan.constraints or None)
    return solve_ik(
        *arguments,
        damping=settings.damping,
        limits=plan.limits,
        constraints=plan.constraints or None,
    )


def step_errors(
    plan: Plan,
    configuration: Configuration,
    settings: Settings,
    compiled: CompiledPlan | None = None,
) -> dict[str, float | None]:
    """:func:`task_errors`, as one compiled call when the step's problem is compiled.

    The norms come from the compiled plan of ``solve_ik`` with these arguments (the one
    the step used, ``compiled`` when given; with a solver other than daqp, built for
    the norms alone), mapped to the task names. On the Python engine, or when the plan
    is not compiled, each task is asked.
    """
    try:
        if compiled is not None:
            norms = compiled.error_norms()
        else:
            norms = error_norms(
                configuration,
                plan.objectives,
                settings.step_dt,
                settings.damping,
                plan.limits,
                plan.constraints or None,
            )
    except (PosekitError, ArithmeticError, ValueError):  # a plan that cannot be built
        norms = None
    if norms is None:
        return task_errors(plan, configuration)
    return _named_norms(plan, norms.tolist(), configuration)


def _named_norms(
    plan: Plan, values: list[Any], configuration: Configuration
) -> dict[str, float | None]:
    """Task name → norm, in stack order, of the norms of the plan's objectives then
    constraints (``values``, appended to); None for the tasks without one; partly
    weighed tasks' norms as :func:`weighed` gives them."""
    values.append(None)
    errors = dict(zip(plan.names, map(values.__getitem__, plan.error_slots), strict=True))
    weighed(plan, configuration, errors)
    return errors


def task_errors(plan: Plan, configuration: Configuration) -> dict[str, float | None]:
    """Task name → ‖e‖ at ``configuration`` (of the components it weighs: :func:`weighed`),
    in stack order (None when it has no error or cannot be evaluated)."""
    errors: dict[str, float | None] = dict.fromkeys(plan.names)
    for name, task in plan.error_tasks:
        try:
            vector = task.compute_error(configuration)
            errors[name] = math.sqrt(float(vector @ vector))
        except (PosekitError, ArithmeticError, ValueError):
            errors[name] = None
    weighed(plan, configuration, errors)
    return errors
