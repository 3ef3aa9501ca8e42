"""Replaying a take offline: its inputs at their steps through a spec, step by step.

A replay builds a session of its own (no solver, no store, no watchers) from the take's
start — or from another spec of the same robot, started at the take's q — and, for each
of the take's steps ``k``, applies the inputs recorded before step ``k`` through the
session's own methods, then solves one step with the spec's fixed ``dt``. So the logic
is the live session's, and two replays of one take through one spec give the same q,
errors and statuses bit for bit (the solve times differ). An input the replayed spec
cannot take (a task it does not have) is skipped and counted.

Per step it keeps q, the joint velocities :math:`v_k = (q_k \\ominus q_{k-1}) / dt`
(``mj_differentiatePos``, [rad/s] or [m/s] per DoF), every task's error norm, the
status and the solve time [µs].
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from posekit.ik.exceptions import PosekitError
from posekit.sessions.kinds import TaskPatch
from posekit.sessions.live.session import Session
from posekit.sessions.live.state import SessionState
from posekit.sessions.specs.session_spec import SessionSpec
from posekit.sessions.specs.solver_settings import SolverPatch
from posekit.sessions.takes.take import (
    AddLimitEvent,
    AddTaskEvent,
    LimitEvent,
    QEvent,
    RemoveTaskEvent,
    SolverEvent,
    Take,
    TakeEvent,
    TargetEvent,
    TaskEvent,
)


@dataclass
class Replay:
    """What a replay gives, step by step (``steps`` rows)."""

    dt: float  # [s] the step's duration
    q: np.ndarray  # (steps, nq)
    velocity: np.ndarray  # (steps, nv) [rad/s | m/s]
    errors: dict[str, list[float | None]]  # task → its error norm per step
    status: list[str]
    solve_us: list[float]
    skipped: int = 0  # inputs the spec could not take
    seconds: float = 0.0  # [s] the replay took
    joint_names: list[str] = field(default_factory=list)


def _apply(session: Session, event: TakeEvent) -> None:
    """One recorded input, through the session's own method for it."""
    if isinstance(event, TargetEvent):
        session.set_target(event.task, event.target)
    elif isinstance(event, TaskEvent):
        session.patch_task(event.task, event.patch)
    elif isinstance(event, LimitEvent):
        session.patch_limit(event.limit, event.patch)
    elif isinstance(event, QEvent):
        session.set_q(event.q)
    elif isinstance(event, SolverEvent):
        session.set_solver(event.patch)
    elif isinstance(event, AddTaskEvent):
        session.add_task(event.spec)
    elif isinstance(event, RemoveTaskEvent):
        session.remove_task(event.task)
    elif isinstance(event, AddLimitEvent):
        session.add_limit(event.spec)
    else:
        session.remove_limit(event.limit)


def replay(
    take: Take,
    model: mujoco.MjModel,
    entry: str,
    spec: SessionSpec | None = None,
    tasks: Mapping[str, TaskPatch | Mapping[str, Any]] | None = None,
    solver: SolverPatch | None = None,
) -> Replay:
    """Run ``take`` through ``spec`` (default: the take's start) on ``model`` (module
    docstring), its ``tasks`` patched first (e.g. other weights) and its ``solver``
    settings changed; ``spec`` starts at the take's q. A patch that does not fit raises
    the session's error (nothing is replayed)."""
    start = take.start if spec is None else spec.model_copy(update={"q": take.start.q})
    session = Session("replay", start, model, entry)
    for name, patch in (tasks or {}).items():
        session.patch_task(name, patch)
    if solver is not None:
        session.set_solver(solver)
    by_step: dict[int, list[TakeEvent]] = {}
    for event in take.events:
        by_step.setdefault(event.step, []).append(event)
    began = time.perf_counter()
    rows, skipped = _run(session, take.steps, by_step)
    q = np.array([row.q for row in rows]).reshape(len(rows), model.nq)
    return Replay(
        dt=session.solver.step_dt,
        q=q,
        velocity=_velocities(model, take.start.q, q, session.solver.step_dt),
        errors={
            name: [row.errors.get(name) for row in rows]
            for name in dict.fromkeys(n for row in rows for n in row.errors)
        },
        status=[row.status for row in rows],
        solve_us=[row.solve_us for row in rows],
        skipped=skipped,
        seconds=time.perf_counter() - began,
        joint_names=[model.joint(j).name for j in range(model.njnt)],
    )


def _run(
    session: Session, steps: int, by_step: dict[int, list[TakeEvent]]
) -> tuple[list[SessionState], int]:
    """The states of ``steps`` steps, each after its inputs; and the inputs skipped."""
    rows: list[SessionState] = []
    skipped = 0
    for k in range(steps):
        for event in by_step.get(k, ()):
            try:
                _apply(session, event)
            except PosekitError:  # e.g. a task this spec does not have
                skipped += 1
        rows.append(session.step())
    return rows, skipped


def _velocities(model: mujoco.MjModel, q0: list[float], q: np.ndarray, dt: float) -> np.ndarray:
    """:math:`(q_k \\ominus q_{k-1}) / dt` per step, from ``q0`` before the first."""
    velocity = np.zeros((len(q), model.nv))
    previous = np.asarray(q0, dtype=float)
    for k, current in enumerate(q):
        mujoco.mj_differentiatePos(model, velocity[k], dt, previous, current)
        previous = current
    return velocity
