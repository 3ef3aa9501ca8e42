"""The websocket's messages (``WS /api/sessions/{id}/stream``, :mod:`posekit.api.routes_stream`).

Server → client: ``hello``, ``state`` (:class:`~posekit.api.protocol.StateMessage`),
``tasks``, ``reload`` (:class:`~posekit.sessions.reload.reload_report.ReloadReport`),
``error``, ``pong``; client → server: ``target``, ``ping``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from posekit.api.protocol import PROTOCOL, Ref, SessionSummary, StateMessage, state_of, summary_of
from posekit.sessions.kinds import LimitSpec, TaskSpec
from posekit.sessions.live.info import SessionInfo
from posekit.sessions.live.state import SessionState
from posekit.sessions.live.tasks_snapshot import TasksSnapshot
from posekit.sessions.specs.solver_settings import SolverSettings
from posekit.sessions.specs.types import MujocoName, Name, Quaternion, Vec3, Vector


class TasksMessage(BaseModel):
    """``tasks``: the task stack, limits and solver settings, after every change of them."""

    type: Literal["tasks"] = "tasks"
    revision: int = Field(description="The session's change counter.")
    tasks: list[TaskSpec]
    limits: list[LimitSpec]
    solver: SolverSettings


class HelloMessage(BaseModel):
    """``hello``: sent once, first: the session, its stack and its latest state."""

    type: Literal["hello"] = "hello"
    protocol: int = Field(PROTOCOL, description="Version of this protocol.")
    session: SessionSummary
    tasks: list[TaskSpec]
    limits: list[LimitSpec]
    solver: SolverSettings
    revision: int
    state: StateMessage


class PongMessage(BaseModel):
    """``pong``: the answer to ``ping``."""

    type: Literal["pong"] = "pong"
    ref: Any = None
    time: float = Field(description="Server time [s since the epoch].")


class TargetMessage(BaseModel):
    """Client → server: move a task's target (fields and validation as a REST target PATCH)."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["target"]
    task: Name
    position: Vec3 | None = None
    wxyz: Quaternion | None = None
    direction: Vec3 | None = None
    q: Vector | None = None
    keyframe: MujocoName | None = None
    ref: Ref = None


class PingMessage(BaseModel):
    """Client → server: ask for a ``pong`` (keep-alive, round-trip time)."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["ping"]
    ref: Ref = None


CLIENT_MESSAGE: TypeAdapter[TargetMessage | PingMessage] = TypeAdapter(
    Annotated[TargetMessage | PingMessage, Field(discriminator="type")]
)


def tasks_of(snapshot: TasksSnapshot) -> TasksMessage:
    return TasksMessage(
        revision=snapshot.revision,
        tasks=snapshot.tasks,
        limits=snapshot.limits,
        solver=snapshot.solver,
    )


def hello_of(info: SessionInfo, snapshot: TasksSnapshot, state: SessionState) -> HelloMessage:
    return HelloMessage(
        session=summary_of(info),
        tasks=snapshot.tasks,
        limits=snapshot.limits,
        solver=snapshot.solver,
        revision=snapshot.revision,
        state=state_of(state),
    )


def encode(message: object) -> str:
    """A message for one watcher (a model of this module, a state or a tasks snapshot)
    as JSON text for the websocket."""
    if isinstance(message, SessionState):
        return message.json()
    if isinstance(message, TasksSnapshot):
        message = tasks_of(message)
    if not isinstance(message, BaseModel):
        raise TypeError(f"not a protocol message: {message!r}")
    return message.model_dump_json()
