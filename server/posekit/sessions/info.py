"""What a session is, in a few fields: identity, model sizes, status and stack names."""

from __future__ import annotations

from dataclasses import dataclass

from posekit.sessions.solver_settings import SolverSettings


@dataclass(frozen=True)
class SessionInfo:
    """A session's identity and status, as the API lists it.

    Attributes:
        id: Session id (used in every session URL).
        robot: Robot name in the registry; ``entry``: its model's entry point.
        nq, nv: Configuration and velocity sizes; ``joint_names`` in model order.
        created: Creation time [s since the epoch].
        status: running | converged | failed | paused | unloaded.
        error: Why the last step failed, if it did.
        seq: The latest state's step counter; ``revision``: accepted changes.
        watchers: Open streams and viewers.
        tasks, limits: Names, in stack order.
        solver: The solver settings.
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
