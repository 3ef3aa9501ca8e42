"""What a live reload did to a session: the websocket ``reload`` message, and the
``reload`` field of the session's summary (the latest one)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Dropped(BaseModel):
    """A task or limit the reload changed or removed, and why."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "gripper",
                    "reason": "site 'gripper' does not exist; valid site names are ['tcp']",
                }
            ]
        }
    )

    name: str
    reason: str = Field(description="Why it no longer fits the new model (the error it raised).")


class ReloadReport(BaseModel):
    """``reload``: the files of the session's robot changed and its model was compiled again.

    With ``status: "reloaded"`` the session now runs the new model: q carried over joint
    by joint (by name and type; joints that are new, or whose type changed, start at the
    model's default keyframe or ``qpos0``; values are moved into the new ranges), every
    task and limit that still fits kept (a task whose target no longer fits keeps its
    parameters and starts at its current value), the others listed here. With
    ``status: "failed"`` the new files do not compile: the session keeps the model it had,
    and ``error`` is MuJoCo's message (file names relative to the robot's folder).
    """

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "type": "reload",
                    "robot": "my_arm",
                    "entry": "my_arm",
                    "time": 1795390000.25,
                    "status": "reloaded",
                    "error": None,
                    "revision": 12,
                    "dropped_tasks": [
                        {"name": "gripper", "reason": "site 'gripper' does not exist; …"}
                    ],
                    "dropped_limits": [],
                    "reset_targets": [],
                    "joints_kept": 6,
                    "joints_reset": ["wrist_roll"],
                }
            ]
        }
    )

    type: Literal["reload"] = "reload"
    robot: str
    entry: str
    time: float = Field(description="When it happened [s since the epoch].")
    status: Literal["reloaded", "failed"]
    error: str | None = Field(None, description="Why the new files could not be used.")
    revision: int = Field(
        0, description="The session's revision after the reload; states solved on the new model "
        "carry this revision or a later one."
    )  # fmt: skip
    dropped_tasks: list[Dropped] = Field(default_factory=list)
    dropped_limits: list[Dropped] = Field(default_factory=list)
    reset_targets: list[Dropped] = Field(
        default_factory=list, description="Tasks kept whose target was reset to the current value."
    )
    joints_kept: int = Field(0, description="Joints whose q carried over.")
    joints_reset: list[str] = Field(
        default_factory=list, description="Joints of the new model that start at its default."
    )
