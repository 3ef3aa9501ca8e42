"""How far a parked session stayed from its targets, in meters and radians.

A session parks (``converged``) at a fixed point of its step: every task met, or the
best compromise between them — a target beyond the arm's reach is such a compromise.
The state's per-task errors are norms of error vectors that mix meters and radians; to
say *by how much* a task fell short, the viewer evaluates the targeted tasks (those
with a gizmo) at the state's ``q`` and splits their errors by unit:

=================  ===========================================================
frame, relative    position part ‖e_v‖ [m] and orientation part ‖e_ω‖ [rad]
com                ‖c − c*‖ [m]
look_at, align     the angle between the axis and the target direction [rad],
                   :math:`2 \\arcsin(‖e‖/2)` (``e`` is a difference of unit vectors)
=================  ===========================================================

Axes whose cost is zero are not targets and are left out. A task is short of its
target when a part exceeds ``SHORT_M`` or ``SHORT_RAD``. Nothing here changes the
session: its engine tasks are rebuilt from the specs (as the session builds them)
whenever the session's revision changes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np
from posekit import Configuration, PosekitError
from posekit.ik.tasks import Task
from posekit.sessions.kinds import TaskSpecBase, task_kind
from posekit.sessions.live.state import SessionState

SHORT_M = 1e-3  # [m] a position this far from its target is short of it
SHORT_RAD = 1e-2  # [rad] (about 0.6°)


@dataclass(frozen=True)
class Shortfall:
    """One task part that stayed away from its target."""

    task: str
    amount: float
    unit: str  # "m" or "rad"


def describe(short: list[Shortfall]) -> str:
    """``ee 0.099 m, 0.023 rad from its target; look 0.31 rad from its target``."""
    parts: dict[str, list[str]] = {}
    for part in short:
        parts.setdefault(part.task, []).append(f"{part.amount:.2g} {part.unit}")
    return "; ".join(
        f"{task} {', '.join(amounts)} from its target" for task, amounts in parts.items()
    )


def _mask(cost: Any, size: int) -> np.ndarray:
    """Which axes a cost (scalar or per axis) targets."""
    values = np.broadcast_to(np.asarray(cost, dtype=float), (size,))
    return values > 0.0


def _pose(error: np.ndarray, params: Any) -> list[tuple[float, str]]:
    position = error[:3][_mask(params.position_cost, 3)]
    rotation = error[3:][_mask(params.orientation_cost, 3)]
    return [(float(np.linalg.norm(position)), "m"), (float(np.linalg.norm(rotation)), "rad")]


def _point(error: np.ndarray, params: Any) -> list[tuple[float, str]]:
    return [(float(np.linalg.norm(error[_mask(params.cost, 3)])), "m")]


def _direction(error: np.ndarray, params: Any) -> list[tuple[float, str]]:
    if not _mask(params.cost, 3).any():
        return []
    chord = float(np.linalg.norm(error))
    return [(2.0 * math.asin(min(chord / 2.0, 1.0)), "rad")]


MEASURES: dict[str, Callable[[np.ndarray, Any], list[tuple[float, str]]]] = {
    "frame": _pose,
    "relative_frame": _pose,
    "com": _point,
    "look_at": _direction,
    "axis_align": _direction,
}
LIMIT = {"m": SHORT_M, "rad": SHORT_RAD}


class TargetShortfall:
    """The targeted tasks of one model, evaluated at a state's ``q``."""

    def __init__(self, model: mujoco.MjModel) -> None:
        self._model = model
        self._configuration = Configuration(model)
        self._revision = -1
        self._tasks: list[tuple[str, Task, TaskSpecBase]] = []

    def _rebuild(self, specs: list[TaskSpecBase]) -> None:
        self._tasks = []
        for spec in specs:
            if spec.type not in MEASURES or not spec.enabled or spec.target is None:
                continue
            kind = task_kind(spec)
            try:
                task = kind.build(spec, self._model, 0.01)
                kind.apply_target(task, spec.target)
            except (PosekitError, ValueError, TypeError):
                continue
            self._tasks.append((spec.name or spec.type, task, spec))

    def of(
        self, state: SessionState, revision: int, specs: Callable[[], list[TaskSpecBase]]
    ) -> list[Shortfall]:
        """The parts of targeted tasks beyond ``SHORT_M`` / ``SHORT_RAD`` at ``state.q``;
        ``specs`` gives the session's task specs, read when ``revision`` is new (read
        the revision first: specs newer than it are only rebuilt once more)."""
        if revision != self._revision:
            self._rebuild(specs())
            self._revision = revision
        candidates = [
            entry for entry in self._tasks if (state.errors.get(entry[0]) or 0.0) > SHORT_M
        ]  # a smaller error norm has no part beyond either limit
        if not candidates:
            return []
        self._configuration.update(np.asarray(state.q))
        short = []
        for name, task, spec in candidates:
            try:
                error = task.compute_error(self._configuration)
            except (PosekitError, ValueError, ArithmeticError):
                continue
            for amount, unit in MEASURES[spec.type](error, spec.params):
                if amount > LIMIT[unit]:
                    short.append(Shortfall(name, amount, unit))
        return short
