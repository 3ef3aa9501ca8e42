"""Which engine ``solve_ik`` uses, and the compiled engine's plans, cached per configuration.

``"compiled"`` (the default) runs a step as one compiled call when everything in it is
covered (:mod:`~posekit.ik.compiled.kinds`, ``solver="daqp"`` without solver
settings, the C libraries found); anything else takes ``"python"``, the reference
implementation. An uncovered task or limit, or missing libraries, warn once per reason
(:class:`CompiledFallbackWarning`); another solver or solver settings are the caller's
choice and do not. :func:`fallback_reason` tells, without solving, which path a call
takes and why.

A configuration keeps its last few plans, keyed by the identity of its model, data,
tasks, limits and constraints and by ``dt`` and ``damping``; the last one is checked
first, so a loop solving the same problem pays one tuple comparison per step.
:func:`error_norms` reads every task's error norm from the same plan (one more
compiled call, e.g. after the step's integration).
"""

from __future__ import annotations

import warnings
import weakref
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from posekit.ik.compiled.plan import Plan
from posekit.ik.compiled.selection import ENGINE, current_engine
from posekit.ik.compiled.symbols import availability
from posekit.ik.configuration import Configuration

MAX_PLANS_PER_CONFIGURATION = 8

Key = tuple[object, ...]


class CompiledFallbackWarning(UserWarning):
    """A step took the Python path; the message says why (warned once per reason)."""


class _Plans:
    """The plans of one configuration, most recent first."""

    __slots__ = ("last_key", "last_plan", "plans")

    def __init__(self) -> None:
        self.last_key: Key | None = None
        self.last_plan: Plan | None = None
        self.plans: OrderedDict[Key, Plan] = OrderedDict()


_PLANS: dict[int, _Plans] = {}
"""Plans by ``id(configuration)``; an entry leaves with its configuration (``weakref.finalize``)."""
_WARNED: set[str] = set()


def _plans_of(configuration: Configuration) -> _Plans:
    plans = _PLANS.get(id(configuration))
    if plans is None:
        plans = _PLANS[id(configuration)] = _Plans()
        weakref.finalize(configuration, _PLANS.pop, id(configuration), None)
    return plans


def _key(
    configuration: Configuration,
    tasks: Sequence[object],
    dt: float,
    damping: float,
    limits: Sequence[object],
    constraints: Sequence[object] | None,
) -> Key:
    return (
        tuple(tasks),
        tuple(limits),
        tuple(constraints) if constraints else (),
        dt,
        damping,
        configuration.data,
        configuration.model,
    )


def _plan(configuration: Configuration, key: Key) -> Plan:
    """The plan of the problem ``key``, reused when the same problem was solved before
    (the last one is checked first: a loop solving the same problem pays one lookup and
    one tuple comparison)."""
    plans = _PLANS.get(id(configuration))
    if plans is None:
        plans = _plans_of(configuration)
    try:
        if key == plans.last_key and plans.last_plan is not None:
            return plans.last_plan
        plan = plans.plans.get(key)
    except (TypeError, ValueError):  # unhashable or array-valued dt/damping
        plan = None
    if plan is None:
        plan = Plan(configuration.model, configuration.data, *key[:5])  # type: ignore[arg-type]
        plans.plans[key] = plan
        while len(plans.plans) > MAX_PLANS_PER_CONFIGURATION:
            plans.plans.popitem(last=False)
    plans.plans.move_to_end(key)
    plans.last_key, plans.last_plan = key, plan
    return plan


def _static_reason(solver: str, settings: dict[str, object]) -> str | None:
    if current_engine() != "compiled":
        return "the engine is set to 'python' (posekit.set_engine)"
    if solver != "daqp":
        return f"solver {solver!r}: the compiled step solves with daqp only"
    if settings:
        return f"solver settings {sorted(settings)}: the compiled step uses daqp's defaults"
    return availability()


def fallback_reason(
    configuration: Configuration,
    tasks: Sequence[object],
    dt: float,
    solver: str = "daqp",
    damping: float = 1e-12,
    limits: Sequence[object] | None = None,
    constraints: Sequence[object] | None = None,
    **settings: object,
) -> str | None:
    """Why ``solve_ik`` with these arguments takes the Python path; ``None``: it is compiled.

    ``limits=None`` means the default configuration limit, as in ``solve_ik``.
    """
    reason = _static_reason(solver, settings)
    if reason is not None:
        return reason
    return plan_for(configuration, tasks, dt, damping, limits, constraints).reason


def plan_for(
    configuration: Configuration,
    tasks: Sequence[object],
    dt: float,
    damping: float = 1e-12,
    limits: Sequence[object] | None = None,
    constraints: Sequence[object] | None = None,
) -> Plan:
    """The (cached) plan ``solve_ik`` uses for this problem, e.g. to inspect its last QP."""
    from posekit.ik.solve import default_limits

    chosen = default_limits(configuration) if limits is None else limits
    return _plan(configuration, _key(configuration, tasks, dt, damping, chosen, constraints))


def error_norms(
    configuration: Configuration,
    tasks: Sequence[object],
    dt: float,
    damping: float = 1e-12,
    limits: Sequence[object] | None = None,
    constraints: Sequence[object] | None = None,
) -> np.ndarray | None:
    """Each task's ``‖compute_error‖`` at the current kinematics, from the problem's plan.

    The arguments are :func:`plan_for`'s (the plan of the last step is found with one
    tuple comparison). Norms come in :meth:`Plan.error_norms`'s order: ``tasks``, then
    ``constraints``; ``NaN`` for a task without an error vector (kinetic energy).
    ``None`` when the problem takes the Python path (the engine is ``"python"``, or the
    plan has a :attr:`~Plan.reason`): compute the errors with the tasks themselves.
    """
    if current_engine() != "compiled":
        return None
    if limits is None:
        from posekit.ik.solve import default_limits

        limits = default_limits(configuration)
    key = _key(configuration, tasks, dt, damping, limits, constraints)
    return _plan(configuration, key).error_norms()


def solve_compiled(
    configuration: Configuration,
    tasks: Sequence[object],
    dt: float,
    solver: str,
    damping: float,
    limits: Sequence[object],
    constraints: Sequence[object] | None,
    settings: dict[str, object],
) -> np.ndarray | None:
    """The step's velocity from its compiled plan, or ``None``: take the Python path."""
    if solver != "daqp" or settings or ENGINE[0] != "compiled":
        return None  # a choice of the caller: no warning (fallback_reason tells)
    plan = _plan(configuration, _key(configuration, tasks, dt, damping, limits, constraints))
    velocity = plan.solve()
    if velocity is None and plan.reason is not None:
        _warn_once(plan.reason)
    return velocity


def forget_warnings() -> None:
    """Warn again about every fallback reason (each is otherwise warned once per process)."""
    _WARNED.clear()


def _warn_once(reason: str) -> None:
    if reason not in _WARNED:
        _WARNED.add(reason)
        warnings.warn(
            f"solve_ik takes the Python path: {reason}", CompiledFallbackWarning, stacklevel=4
        )
