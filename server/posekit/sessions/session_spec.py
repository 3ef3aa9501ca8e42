"""The portable session spec and the session-creation request."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from posekit.sessions.kinds import LimitSpec, TaskSpec
from posekit.sessions.solver_settings import SolverPatch, SolverSettings
from posekit.sessions.types import FiniteFloat, MujocoName


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


class CreateSession(BaseModel):
    """``POST /api/sessions``: a robot (with keyframe and preset), or a full spec."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"robot": "arm7"},
                {"robot": "universal_robots_ur5e", "keyframe": "home", "preset": True},
                {"robot": "unitree_g1", "preset": False, "solver": {"rate_hz": 30}},
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
    preset: bool = Field(True, description="Add the robot's default tasks.")
    solver: SolverPatch | None = Field(None, description="Solver settings to change.")
    spec: SessionSpec | None = Field(
        None, description="Restore this spec; then robot/entry/keyframe/preset must be absent."
    )
