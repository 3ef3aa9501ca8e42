"""A take: the spec and q a session started from, and every input it was given after.

An input is one of the session's own changes — a target moved, a task or limit patched
(weights, enabled), q reset, solver settings changed, a task or limit added or removed —
with the
number of solver steps the session had taken since the take started when it arrived
(``step``: it is applied before that step) and its time [s since the start]. Replaying
the inputs at the same steps through the same spec gives the same states, bit for bit
(:mod:`~posekit.sessions.takes.replay`). A take is also the portable file a user
downloads and uploads (``format`` ``posekit-take``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, NonNegativeInt

from posekit.sessions.kinds import LimitPatch, LimitSpec, Target, TaskPatch, TaskSpec
from posekit.sessions.specs.session_spec import SessionSpec
from posekit.sessions.specs.solver_settings import SolverPatch
from posekit.sessions.specs.types import Name, Vector

MAX_EVENTS = 200_000  # inputs a take holds at most (a drag at 120 Hz for ~28 min)
MAX_STEPS = 216_000  # steps a take spans at most (an hour at 60 Hz): a replay's CPU time
TakeId = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")]


class _Event(BaseModel):
    """An input of a take."""

    model_config = ConfigDict(extra="forbid")
    step: NonNegativeInt = Field(
        description="Solver steps taken before it (it precedes that step)."
    )
    t: NonNegativeFloat = Field(description="[s] since the take started.")


class TargetEvent(_Event):
    """A target moved (REST, stream or viewer)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "step": 12,
                    "t": 0.2,
                    "kind": "target",
                    "task": "ee",
                    "target": {"position": [0.4, 0.1, 0.5]},
                }
            ]
        },
    )
    kind: Literal["target"]
    task: Name
    target: Target


class TaskEvent(_Event):
    """A task PATCHed (weights, gain, enabled, …)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "step": 30,
                    "t": 0.5,
                    "kind": "task",
                    "task": "ee",
                    "patch": {"orientation_cost": 0.1},
                }
            ]
        },
    )
    kind: Literal["task"]
    task: Name
    patch: TaskPatch


class LimitEvent(_Event):
    """A limit PATCHed."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "step": 31,
                    "t": 0.52,
                    "kind": "limit",
                    "limit": "configuration",
                    "patch": {"enabled": False},
                }
            ]
        },
    )
    kind: Literal["limit"]
    limit: Name
    patch: LimitPatch


class QEvent(_Event):
    """q set (``PUT …/q``)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"step": 40, "t": 0.7, "kind": "q", "q": [0.0, 0.444, 0.0, -1.256, 0.0, 1.44, 0.0]}
            ]
        },
    )
    kind: Literal["q"]
    q: Vector


class SolverEvent(_Event):
    """Solver settings changed."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"step": 41, "t": 0.71, "kind": "solver", "patch": {"damping": 0.001}}]
        },
    )
    kind: Literal["solver"]
    patch: SolverPatch


class AddTaskEvent(_Event):
    """A task added."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "step": 50,
                    "t": 0.9,
                    "kind": "add_task",
                    "spec": {"name": "com", "type": "com", "params": {"cost": 1.0}},
                }
            ]
        },
    )
    kind: Literal["add_task"]
    spec: TaskSpec


class RemoveTaskEvent(_Event):
    """A task removed."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"step": 60, "t": 1.0, "kind": "remove_task", "task": "com"}]
        },
    )
    kind: Literal["remove_task"]
    task: Name


class AddLimitEvent(_Event):
    """A limit added."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "step": 70,
                    "t": 1.2,
                    "kind": "add_limit",
                    "spec": {"name": "range", "type": "configuration"},
                }
            ]
        },
    )
    kind: Literal["add_limit"]
    spec: LimitSpec


class RemoveLimitEvent(_Event):
    """A limit removed."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"step": 80, "t": 1.3, "kind": "remove_limit", "limit": "range"}]
        },
    )
    kind: Literal["remove_limit"]
    limit: Name


TakeEvent = Annotated[
    TargetEvent
    | TaskEvent
    | LimitEvent
    | QEvent
    | SolverEvent
    | AddTaskEvent
    | RemoveTaskEvent
    | AddLimitEvent
    | RemoveLimitEvent,
    Field(discriminator="kind"),
]


class TakeInfo(BaseModel):
    """A take without its inputs (listings)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"id": "g_JToV6FeCI", "name": "circle", "robot": "arm7", "created": 1796400000.0,
                 "steps": 600, "seconds": 10.0, "events": 200, "recording": False}
            ]
        }
    )  # fmt: skip

    id: TakeId
    name: str = Field("", max_length=200)
    robot: str
    created: float = Field(description="[s since the epoch] when it started.")
    steps: NonNegativeInt = Field(0, description="Solver steps it spans.")
    seconds: NonNegativeFloat = Field(0.0, description="[s] it lasted.")
    events: NonNegativeInt = Field(0, description="Inputs recorded.")
    recording: bool = Field(False, description="Whether it is being recorded now.")


class Take(BaseModel):
    """A recorded take (module docstring): the file ``GET …/takes/{id}`` downloads."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"format": "posekit-take", "version": 1, "id": "g_JToV6FeCI", "name": "circle",
                 "created": 1796400000.0, "steps": 2, "seconds": 0.05,
                 "start": {"robot": "arm7", "q": [0.0, 0.444, 0.0, -1.256, 0.0, 1.44, 0.0],
                           "tasks": [{"name": "ee", "type": "frame", "params": {"frame": "ee"}}]},
                 "events": [{"step": 1, "t": 0.03, "kind": "target", "task": "ee",
                             "target": {"position": [0.4, 0.1, 0.5]}}]}
            ]
        },
    )  # fmt: skip
    format: Literal["posekit-take"] = "posekit-take"
    version: Literal[1] = 1
    id: TakeId
    name: str = Field("", max_length=200)
    created: float
    steps: NonNegativeInt = Field(le=MAX_STEPS)
    seconds: NonNegativeFloat
    start: SessionSpec = Field(description="The session when the take started (q included).")
    events: list[TakeEvent] = Field(default_factory=list, max_length=MAX_EVENTS)

    def info(self, recording: bool = False) -> TakeInfo:
        return TakeInfo(
            id=self.id,
            name=self.name,
            robot=self.start.robot,
            created=self.created,
            steps=self.steps,
            seconds=self.seconds,
            events=len(self.events),
            recording=recording,
        )
