"""The portable session spec and the session-creation request."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, StrictBool, Tag, TypeAdapter

from posekit.sessions.kinds import LimitSpec, TaskSpec
from posekit.sessions.specs.solver_settings import SolverPatch, SolverSettings
from posekit.sessions.specs.types import FiniteFloat, MujocoName


class SessionSpec(BaseModel):
    """Everything a session is: robot, q, tasks with targets, limits, solver.

    ``GET /api/sessions/{sid}/spec`` exports it; ``POST /api/sessions {"spec": …}``
    restores a session in exactly that state.
    """

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "version": 1,
                    "robot": "arm7",
                    "entry": "arm7",
                    "q": [0.0, 0.444, 0.0, -1.256, 0.0, 1.44, 0.0],
                    "tasks": [
                        {
                            "name": "ee",
                            "type": "frame",
                            "params": {"frame": "ee", "frame_type": "site"},
                            "target": {"position": [0.5, 0.0, 0.3], "wxyz": [0, 1, 0, 0]},
                        },
                        {"name": "posture", "type": "posture", "params": {"cost": 0.01}},
                    ],
                    "limits": [{"name": "configuration", "type": "configuration"}],
                    "solver": {"solver": "daqp", "rate_hz": 60.0},
                }
            ]
        },
    )

    version: Literal[1] = Field(1, description="Spec format version.")
    robot: MujocoName = Field(description="Registry name of the robot.")
    entry: MujocoName | None = Field(
        None, description="Entry point; the robot's default when null."
    )
    q: list[FiniteFloat] = Field(description="Configuration (size nq).")
    tasks: list[TaskSpec] = Field(default_factory=list)
    limits: list[LimitSpec] = Field(default_factory=list)
    solver: SolverSettings = Field(default_factory=SolverSettings)


class NewSession(BaseModel):
    """``POST /api/sessions`` on a robot: at a keyframe, with the robot's default tasks."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"robot": "arm7"},
                {"robot": "humanoid", "keyframe": "stand", "preset": True},
                {"robot": "arm7", "preset": False, "solver": {"rate_hz": 30}},
            ]
        },
    )

    robot: MujocoName | None = Field(
        None, description="Registry name; the built-in arm by default."
    )
    entry: MujocoName | None = Field(None, description="Entry point (Menagerie robots).")
    keyframe: MujocoName | None = Field(
        None, description="Start keyframe; the robot's default keyframe when omitted."
    )
    preset: StrictBool = Field(True, description="Add the robot's default tasks.")
    solver: SolverPatch | None = Field(None, description="Solver settings to change.")


class RestoreSession(BaseModel):
    """``POST /api/sessions`` from a spec exported by ``GET /api/sessions/{id}/spec``."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "spec": {
                        "robot": "arm7",
                        "q": [0.0, 0.444, 0.0, -1.256, 0.0, 1.44, 0.0],
                        "tasks": [{"type": "frame", "params": {"frame": "ee"}}],
                    }
                }
            ]
        },
    )

    spec: SessionSpec = Field(description="The session to restore, exactly.")
    solver: SolverPatch | None = Field(None, description="Solver settings to change.")


def _creation_kind(body: Any) -> str:
    """Which kind of creation a body asks for: a spec is restored, anything else is new."""
    given = body if isinstance(body, dict) else vars(body) if isinstance(body, BaseModel) else {}
    return "RestoreSession" if "spec" in given else "NewSession"


CreateSession = Annotated[
    Annotated[NewSession, Tag("NewSession")] | Annotated[RestoreSession, Tag("RestoreSession")],
    Discriminator(_creation_kind),
]
"""``POST /api/sessions``: a robot (with keyframe and preset), or a full spec — not both
(with a ``spec``, ``robot``, ``entry``, ``keyframe`` and ``preset`` are refused)."""

CREATE_SESSION: TypeAdapter[CreateSession] = TypeAdapter(CreateSession)
