"""A session's task stack, limits and solver settings at one revision (what watchers get
after each change of them: the websocket ``tasks`` message)."""

from __future__ import annotations

from dataclasses import dataclass

from posekit.sessions.kinds import LimitSpecBase, TaskSpecBase
from posekit.sessions.specs.solver_settings import SolverSettings


@dataclass(frozen=True)
class TasksSnapshot:
    """Task specs (with targets) in stack order, limit specs and solver settings."""

    revision: int
    tasks: list[TaskSpecBase]
    limits: list[LimitSpecBase]
    solver: SolverSettings
