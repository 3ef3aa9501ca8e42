"""What a session is, in a few fields: identity, model sizes, status and stack names."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol

import mujoco

from posekit.sessions.reload.reload_report import ReloadReport
from posekit.sessions.specs.solver_settings import SolverSettings


class Described(Protocol):
    """What a session's info is read from (:class:`~posekit.sessions.live.session.Session`)."""

    id: str
    robot: str
    entry: str
    model: mujoco.MjModel
    created: float
    last_reload: ReloadReport | None

    @property
    def state(self) -> Any: ...
    @property
    def revision(self) -> int: ...
    @property
    def watchers(self) -> int: ...
    @property
    def solver(self) -> SolverSettings: ...

    def tasks(self) -> list[Any]: ...
    def limits(self) -> list[Any]: ...


@dataclass(frozen=True)
class SessionInfo:
    """A session's identity and status, as the API lists it.

    Attributes:
        id: Session id (used in every session URL).
        robot: Robot name in the registry; ``entry``: its model's entry point.
        nq, nv: Configuration and velocity sizes; ``joint_names`` in model order.
        created: Creation time [s since the epoch].
        status: running | converged | failed | paused | unloaded | unavailable.
        error: Why the last step failed, if it did.
        seq: The latest state's step counter; ``revision``: accepted changes.
        watchers: Open streams and viewers.
        tasks, limits: Names, in stack order.
        solver: The solver settings.
        reload: The latest live reload of its robot's model, if any.
        owner: In a cluster, the replica that solves it (None: none, or no cluster).
        live: Whether a replica solves it now (False: stored only).
    """

    id: str
    robot: str
    entry: str
    nq: int
    nv: int
    joint_names: list[str]
    created: float
    status: str
    error: str | None
    seq: int
    revision: int
    watchers: int
    tasks: list[str]
    limits: list[str]
    solver: SolverSettings
    reload: ReloadReport | None = None
    owner: str | None = None
    live: bool = True

    @classmethod
    def of(cls, session: Described) -> SessionInfo:
        """The info of a live session (hold its lock for a consistent snapshot)."""
        state, model = session.state, session.model
        return cls(
            id=session.id,
            robot=session.robot,
            entry=session.entry,
            nq=int(model.nq),
            nv=int(model.nv),
            joint_names=[model.joint(j).name for j in range(model.njnt)],
            created=session.created,
            status=state.status,
            error=state.error,
            seq=state.seq,
            revision=session.revision,
            watchers=session.watchers,
            tasks=[spec.name or "" for spec in session.tasks()],
            limits=[spec.name or "" for spec in session.limits()],
            solver=session.solver,
            reload=session.last_reload,
        )

    @classmethod
    def stored(
        cls, session_id: str, spec: dict[str, Any], status: str, error: str | None
    ) -> SessionInfo:
        """The info of a session known only by its stored spec (its model is not loaded:
        ``nv`` is 0 and ``joint_names`` empty until it is)."""
        return cls(
            id=session_id,
            robot=str(spec.get("robot", "")),
            entry=str(spec.get("entry") or ""),
            nq=len(spec.get("q", ())),
            nv=0,
            joint_names=[],
            created=time.time(),
            status=status,
            error=error,
            seq=0,
            revision=0,
            watchers=0,
            tasks=[str(t.get("name", "")) for t in spec.get("tasks", ())],
            limits=[str(t.get("name", "")) for t in spec.get("limits", ())],
            solver=SolverSettings.model_validate(spec.get("solver", {})),
            live=False,
        )
