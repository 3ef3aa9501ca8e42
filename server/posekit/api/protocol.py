"""The wire protocol: every REST payload as a model, and the state message.

Task, limit and session specs are the sessions layer's models
(:mod:`posekit.sessions.kinds`, :class:`~posekit.sessions.specs.session_spec.SessionSpec`);
everything else the API sends or receives is defined here. Sessions return objects
(:class:`~posekit.sessions.live.state.SessionState`, :class:`~posekit.sessions.live.info.SessionInfo`,
:class:`~posekit.sessions.live.tasks_snapshot.TasksSnapshot`); the functions at the end turn
them into these models and JSON. A state's JSON is encoded once where it is solved
(:meth:`SessionState.json`), with the fields :class:`StateMessage` documents.

The websocket's own messages are in :mod:`posekit.api.stream_protocol`; a ``state``
message is :class:`StateMessage`, defined here because REST returns it too.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any, Literal

from fastapi import UploadFile
from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from posekit.sessions.live.info import SessionInfo
from posekit.sessions.live.state import SessionState
from posekit.sessions.reload.reload_report import ReloadReport
from posekit.sessions.specs.solver_settings import SolverSettings
from posekit.sessions.specs.types import (
    LeaveOut,
    MujocoName,
    Name,
    Vector,
    exactly_one_of,
)

PROTOCOL = 1
"""Version of the websocket protocol (in ``hello``)."""
Ref = Annotated[str, Field(max_length=128)] | int | float | bool | None


STATE_EXAMPLE: dict[str, Any] = {
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
    "throttled": False,
    "rate_hz": 60.0,
}
SUMMARY_EXAMPLE: dict[str, Any] = {
    "id": "4b25bf3b",
    "robot": "arm7",
    "entry": "arm7",
    "nq": 7,
    "nv": 7,
    "joint_names": [f"joint{i}" for i in range(1, 8)],
    "created": 1795390000.0,
    "status": "running",
    "error": None,
    "seq": 42,
    "revision": 9,
    "watchers": 1,
    "tasks": ["ee", "posture"],
    "limits": ["configuration"],
    "solver": SolverSettings().model_dump(),
    "links": {"self": "/api/sessions/4b25bf3b", "stream": "/api/sessions/4b25bf3b/stream"},
}


class DatabaseHealth(BaseModel):
    """The sessions' database as a replica sees it."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"kind": "sqlite", "ok": True}]})

    kind: Literal["postgresql", "sqlite", "memory", "none"] = Field(
        description="postgresql (a cluster), sqlite (one file), none (nothing persisted)."
    )
    ok: bool = Field(description="Whether it answered a query just now (true for none).")


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
                    "replica": "posekit-1",
                    "database": {"kind": "postgresql", "ok": True},
                }
            ]
        }
    )

    status: str = Field(description="Always 'ok' when the server answers.")
    version: str
    sessions: int = Field(description="Live sessions.")
    max_sessions: int
    solvers: list[str] = Field(description="Installed QP backends.")
    replica: str = Field(description="This replica's id (POSEKIT_REPLICA_ID).")
    database: DatabaseHealth = Field(
        description="Where sessions are stored, and whether it answers."
    )


class StateMessage(BaseModel):
    """The latest solved state (also the websocket ``state`` message)."""

    model_config = ConfigDict(json_schema_extra={"examples": [STATE_EXAMPLE]})

    type: Literal["state"] = Field("state", description="Always 'state'.")
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
    throttled: bool = Field(
        False,
        description=(
            "This session's steps are heavy and the solver is full: it gets its fair share "
            "(plus whatever time the solver has left over) and lighter sessions keep theirs."
        ),
    )
    rate_hz: float = Field(
        0.0,
        description=(
            "The rate the server steps this session at [Hz]: its own rate_hz, or lower "
            "while it is throttled or the server is too loaded to give it 90 % of it "
            "(then the rate it gets, smoothed over its last steps)."
        ),
    )
    limits: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Limit name → the joints it holds at a bound after this step (a joint at "
        "the end of its range, or as fast as its velocity limit); only limits that bind.",
    )


class SessionSummary(BaseModel):
    """A session's identity and status."""

    model_config = ConfigDict(json_schema_extra={"examples": [SUMMARY_EXAMPLE]})

    id: str = Field(description="Session id, used in every session URL.")
    robot: str
    entry: str = Field(description="Entry point of the robot model.")
    nq: int
    nv: int
    joint_names: list[str] = Field(description="Joints in model order.")
    created: float = Field(description="Creation time [s since the epoch].")
    status: str = Field(
        description=(
            "running | converged | failed | paused; remote: solved by another replica of "
            "the cluster (owner names it); unloaded: idle, kept as its spec and "
            "revived (same id, same state) by the next request that names it; unavailable: "
            "stored, but it cannot be restored now (error says why, e.g. its robot cannot "
            "be loaded); it is kept and tried again on every request and every 30 s."
        )
    )
    error: str | None = Field(
        description="Last solve error, if the session is failed; why it is unavailable."
    )
    seq: int = Field(description="Latest state's step counter.")
    revision: int = Field(description="Number of accepted changes.")
    watchers: int = Field(description="Open websocket streams and viewers.")
    tasks: list[str] = Field(description="Task names in stack order.")
    limits: list[str] = Field(description="Limit names.")
    solver: SolverSettings
    reload: ReloadReport | None = Field(
        None,
        description="The latest live reload of the robot's model (its files changed), if "
        "any: what was kept, dropped or reset, or why the new files could not be used.",
    )
    owner: str | None = Field(
        None,
        description="In a cluster (listing), the replica that solves it; null when none does "
        "or without a cluster.",
    )
    live: bool = Field(
        True, description="Whether a replica solves it now (false: stored only, unloaded)."
    )
    links: dict[str, str] = Field(description="URLs of the session's resources.")


class SessionDetail(SessionSummary):
    """A session with its latest state."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{**SUMMARY_EXAMPLE, "state": STATE_EXAMPLE}]}
    )

    state: StateMessage


class RobotUpload(BaseModel):
    """``POST /api/robots`` (multipart/form-data): a robot's files and its name."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"file": "my_arm.zip", "name": "my_arm"}]}
    )

    file: UploadFile = Field(
        description="One MJCF (.xml) or URDF (.urdf) file, or a .zip of a model folder "
        "(meshes, textures and included files inside it)."
    )
    name: Name | None = Field(None, description="Registry name; from the file's name when omitted.")
    entry: Name | None = Field(
        None, description="Default entry point, when the zip holds several model files."
    )


class SetQ(LeaveOut):
    """``PUT /q``: a configuration or a keyframe name (exactly one)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            **exactly_one_of("q", "keyframe"),
            "examples": [{"keyframe": "home"}, {"q": [0, 0.4, 0, -1.2, 0, 1.4, 0]}],
        },
    )

    q: Vector | SkipJsonSchema[None] = Field(None, description="Configuration of size nq.")
    keyframe: MujocoName | SkipJsonSchema[None] = Field(None, description="Keyframe name.")

    @model_validator(mode="after")
    def _one(self) -> SetQ:
        if (self.q is None) == (self.keyframe is None):
            raise ValueError("give exactly one of q or keyframe")
        return self


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


# ============================================================ conversions
def summary_of(info: SessionInfo) -> SessionSummary:
    """A session's summary with the links of its resources."""
    return SessionSummary(**asdict(info), links=session_links(info.id))


def state_of(state: SessionState) -> StateMessage:
    return StateMessage.model_validate(state.message())
