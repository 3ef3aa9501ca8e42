"""PATCH bodies of tasks and limits: which fields apply depends on the kind."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from posekit.sessions.kinds.target import Target
from posekit.sessions.types import Cost3, Gain, LmDamping, MujocoName, NonNegativeFloat, Role, Vec3


class TaskPatch(BaseModel):
    """Fields a PATCH may change; which ones apply depends on the task type.

    Frames, joints and equalities are the task's identity: to change them, delete the
    task and add a new one.
    """

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"position_cost": 2.0, "orientation_cost": 0.1},
                {"enabled": False},
                {"target": {"position": [0.5, 0.1, 0.3]}},
            ]
        },
    )

    position_cost: Cost3 | None = None
    orientation_cost: Cost3 | None = None
    cost: NonNegativeFloat | list[NonNegativeFloat] | dict[MujocoName, NonNegativeFloat] | None = (
        None
    )
    gain: Gain | None = None
    lm_damping: LmDamping | None = None
    axis: Vec3 | None = None
    target: Target | None = None
    enabled: bool | None = None
    role: Role | None = None

    def param_updates(self) -> dict[str, object]:
        """The set fields that belong to ``params``."""
        fields = self.model_fields_set - {"target", "enabled", "role"}
        return {k: getattr(self, k) for k in fields if getattr(self, k) is not None}


class LimitPatch(BaseModel):
    """A PATCH of a limit: ``enabled`` and/or params of its type, given flat.

    Any field other than ``enabled`` replaces the param of that name; it is validated
    against the limit's type (an unknown name is a 422 listing the valid ones).
    """

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "examples": [{"enabled": False}, {"gain": 0.5}, {"velocities": {"joint1": 0.5}}]
        },
    )

    enabled: bool | None = None

    def param_updates(self) -> dict[str, Any]:
        """The params to replace."""
        return dict(self.model_extra or {})
