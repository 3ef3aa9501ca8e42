"""Response and small request models of the REST API (session specs live in sessions)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from posekit.sessions.solver_settings import SolverSettings
from posekit.sessions.types import FiniteFloat, MujocoName


class Health(BaseModel):
    """Liveness and capacity."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "status": "ok",
                    "version": "0.1.0",
                    "sessions": 3,
                    "max_sessions": 256,
                    "solvers": ["daqp", "quadprog"],
                }
            ]
        }
    )

    status: str = Field(description="Always 'ok' when the server answers.")
    version: str
    sessions: int = Field(description="Live sessions.")
    max_sessions: int
    solvers: list[str] = Field(description="Installed QP backends.")


class StateMessage(BaseModel):
    """The latest solved state (also the websocket ``state`` message)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "type": "state",
                    "seq": 42,
                    "time": 1795390000.25,
                    "q": [0.0, 0.45, 0.0, -1.25, 0.0, 1.44, 0.0],
                    "errors": {"ee": 0.0004, "posture": 0.31},
                    "converged": False,
                    "status": "running",
                    "error": None,
                    "solve_us": 96.5,
                    "ref": 17,
                    "revision": 9,
                }
            ]
        }
    )

    type: str = Field("state", description="Always 'state'.")
    seq: int = Field(description="Step counter, strictly increasing.")
    time: float = Field(description="Wall-clock time of the step [s since the epoch].")
    q: list[float] = Field(description="Configuration (size nq).")
    errors: dict[str, float | None] = Field(
        description="Task name → norm of its error at q (None: no error vector or disabled)."
    )
    converged: bool = Field(description="The last step was below tolerance; the loop is parked.")
    status: str = Field(description="running | converged | failed | paused.")
    error: str | None = Field(description="Why the last solve failed, when status is failed.")
    solve_us: float = Field(description="Duration of the last IK step [µs].")
    ref: Any = Field(None, description="ref of the latest target message applied before it.")
    revision: int = Field(0, description="The session's change counter when it was solved.")


class SessionSummary(BaseModel):
    """A session's identity and status."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": "4b25bf3b",
                    "robot": "arm7",
                    "entry": "arm7",
                    "nq": 7,
                    "nv": 7,
                    "joint_names": [
                        "joint1",
                        "joint2",
                        "joint3",
                        "joint4",
                        "joint5",
                        "joint6",
                        "joint7",
                    ],
                    "created": 1795390000.0,
                    "status": "running",
                    "error": None,
                    "seq": 42,
                    "revision": 9,
                    "watchers": 1,
                    "tasks": ["ee", "posture"],
                    "limits": ["configuration"],
                    "solver": {
                        "solver": "daqp",
                        "dt": None,
                        "damping": 1e-06,
                        "rate_hz": 60.0,
                        "stream_hz": 60.0,
                        "tolerance": 1e-06,
                        "paused": False,
                    },
                    "links": {
                        "self": "/api/sessions/4b25bf3b",
                        "stream": "/api/sessions/4b25bf3b/stream",
                    },
                }
            ]
        }
    )

    id: str = Field(description="Session id, used in every session URL.")
    robot: str
    entry: str = Field(description="Entry point of the robot model.")
    nq: int
    nv: int
    joint_names: list[str] = Field(description="Joints in model order.")
    created: float = Field(description="Creation time [s since the epoch].")
    status: str = Field(
        description=(
            "running | converged | failed | paused, or unloaded: idle, kept as its spec and "
            "revived (same id, same state) by the next request that names it."
        )
    )
    error: str | None = Field(description="Last solve error, if the session is failed.")
    seq: int = Field(description="Latest state's step counter.")
    revision: int = Field(description="Number of accepted changes.")
    watchers: int = Field(description="Open websocket streams and viewers.")
    tasks: list[str] = Field(description="Task names in stack order.")
    limits: list[str] = Field(description="Limit names.")
    solver: SolverSettings
    links: dict[str, str] = Field(description="URLs of the session's resources.")


class SessionDetail(SessionSummary):
    """A session with its latest state."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": "4b25bf3b",
                    "robot": "arm7",
                    "entry": "arm7",
                    "nq": 7,
                    "nv": 7,
                    "joint_names": [
                        "joint1",
                        "joint2",
                        "joint3",
                        "joint4",
                        "joint5",
                        "joint6",
                        "joint7",
                    ],
                    "created": 1795390000.0,
                    "status": "running",
                    "error": None,
                    "seq": 42,
                    "revision": 9,
                    "watchers": 1,
                    "tasks": ["ee", "posture"],
                    "limits": ["configuration"],
                    "solver": {
                        "solver": "daqp",
                        "dt": None,
                        "damping": 1e-06,
                        "rate_hz": 60.0,
                        "stream_hz": 60.0,
                        "tolerance": 1e-06,
                        "paused": False,
                    },
                    "links": {
                        "self": "/api/sessions/4b25bf3b",
                        "stream": "/api/sessions/4b25bf3b/stream",
                    },
                    "state": {
                        "type": "state",
                        "seq": 42,
                        "time": 1795390000.25,
                        "q": [0.0, 0.45, 0.0, -1.25, 0.0, 1.44, 0.0],
                        "errors": {"ee": 0.0004, "posture": 0.31},
                        "converged": False,
                        "status": "running",
                        "error": None,
                        "solve_us": 96.5,
                        "ref": 17,
                        "revision": 9,
                    },
                }
            ]
        }
    )

    state: StateMessage


class SetQ(BaseModel):
    """``PUT /q``: a configuration or a keyframe name (exactly one)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"keyframe": "home"}, {"q": [0, 0.4, 0, -1.2, 0, 1.4, 0]}]},
    )

    q: list[FiniteFloat] | None = Field(None, description="Configuration of size nq.")
    keyframe: MujocoName | None = Field(None, description="Keyframe name.")


class QResponse(BaseModel):
    """The configuration that was set (quaternions normalised)."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"q": [0.0, 0.444, 0.0, -1.256, 0.0, 1.44, 0.0]}]}
    )

    q: list[float]


def session_links(session_id: str) -> dict[str, str]:
    base = f"/api/sessions/{session_id}"
    return {
        "self": base,
        "spec": f"{base}/spec",
        "tasks": f"{base}/tasks",
        "limits": f"{base}/limits",
        "state": f"{base}/state",
        "stream": f"{base}/stream",
    }
