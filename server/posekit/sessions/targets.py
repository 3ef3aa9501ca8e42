"""Task targets: one loose model for every shape, checked against the task type.

Shapes by task type (positions in [m], in the world unless said otherwise):

=================  ==========================================================
frame              pose ``{position, wxyz}`` of the frame in the world
relative_frame     pose ``{position, wxyz}`` of the frame in the root frame
com                point ``{position}``: the center of mass
look_at            point ``{position}`` the frame's axis should aim at
axis_align         direction ``{direction}`` (normalised) of the frame's axis
posture            ``{q}`` (size nq) or ``{keyframe}`` (stored as its q)
=================  ==========================================================

Pose targets may be partial: ``{position}`` alone keeps the current orientation and
``{wxyz}`` alone the current position. Other task types take no target.
"""

from __future__ import annotations

import math
from typing import Any

import mujoco
import numpy as np
from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from posekit.ik.exceptions import InvalidKeyframe, InvalidTarget
from posekit.ik.lie import SE3
from posekit.ik.tasks.task import BaseTask
from posekit.sessions.errors import InvalidRequest
from posekit.sessions.types import MujocoName, Quaternion, Vec3, Vector

TARGET_FIELDS: dict[str, tuple[str, ...]] = {
    "frame": ("position", "wxyz"),
    "relative_frame": ("position", "wxyz"),
    "com": ("position",),
    "look_at": ("position",),
    "axis_align": ("direction",),
    "posture": ("q", "keyframe"),
}


class Target(BaseModel):
    """A task target; which fields apply depends on the task type (module docstring)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"position": [0.45, 0.0, 0.35], "wxyz": [0.0, 1.0, 0.0, 0.0]},
                {"position": [0.6, 0.2, 0.3]},
                {"direction": [0.0, 0.0, -1.0]},
                {"keyframe": "home"},
            ]
        },
    )

    position: Vec3 | None = Field(None, description="Point or pose position [m].")
    wxyz: Quaternion | None = Field(None, description="Pose orientation (w, x, y, z).")
    direction: Vec3 | None = Field(None, description="Direction (normalised on use).")
    q: Vector | None = Field(None, description="Posture: a configuration of size nq.")
    keyframe: MujocoName | None = Field(None, description="Posture: a keyframe name.")

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Serialise only the fields that are set (a pose is ``{position, wxyz}``)."""
        return {k: v for k, v in handler(self).items() if v is not None}

    def given(self) -> list[str]:
        """Names of the fields that are set."""
        return [
            k
            for k in ("position", "wxyz", "direction", "q", "keyframe")
            if getattr(self, k) is not None
        ]


def takes_target(task_type: str) -> bool:
    """Whether tasks of this type have a target."""
    return task_type in TARGET_FIELDS


def check_fields(task_type: str, target: Target, task_name: str) -> None:
    """Raise :class:`InvalidRequest` unless ``target`` sets only fields of this task type."""
    allowed = TARGET_FIELDS.get(task_type)
    given = target.given()
    if allowed is None:
        raise InvalidRequest(f"task {task_name!r} of type {task_type!r} takes no target")
    wrong = [f for f in given if f not in allowed]
    if wrong or not given:
        what = f"fields {wrong}" if wrong else "no field"
        raise InvalidRequest(
            f"target of task {task_name!r} (type {task_type!r}) has {what}; "
            f"it takes {' and/or '.join(allowed) if task_type.endswith('frame') else ' or '.join(allowed)}"
        )
    if task_type == "posture" and len(given) != 1:
        raise InvalidRequest(f"target of posture task {task_name!r} takes q or keyframe, not both")


def _unit(values: list[float], what: str) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    if norm < 1e-9:
        raise InvalidTarget(f"{what} must be non-zero, got {values}")
    return [v / norm for v in values]


def merge(
    task_type: str, task_name: str, current: Target | None, update: Target, model: mujoco.MjModel
) -> Target:
    """The canonical target after applying ``update`` to ``current``.

    Canonical means complete and normalised: a pose has both position and a unit
    quaternion, a direction is a unit vector, a posture is ``q`` of size nq.
    """
    check_fields(task_type, update, task_name)
    # Values are validated already (finite, right sizes): build without re-validating.
    make = Target.model_construct
    if task_type in ("frame", "relative_frame"):
        position = update.position or (current.position if current else None)
        wxyz = update.wxyz or (current.wxyz if current else None)
        if position is None or wxyz is None:
            raise InvalidRequest(f"target of task {task_name!r} needs both position and wxyz")
        return make(position=list(position), wxyz=_unit(list(wxyz), "wxyz"))
    if task_type in ("com", "look_at"):
        return make(position=list(update.position or []))
    if task_type == "axis_align":
        return make(direction=_unit(list(update.direction or []), "direction"))
    # posture
    if update.keyframe is not None:
        key_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, update.keyframe)
        if key_id < 0:
            raise InvalidKeyframe(update.keyframe, model)
        return make(q=model.key_qpos[key_id].tolist())
    q = list(update.q or [])
    if len(q) != model.nq:
        raise InvalidTarget(f"posture target q must have nq={model.nq} values, got {len(q)}")
    return make(q=q)


def apply(task_type: str, task: BaseTask, target: Target) -> None:
    """Set a canonical target on an engine task (the engine validates it again)."""
    if task_type in ("frame", "relative_frame"):
        task.set_target(SE3(np.array([*target.wxyz, *target.position])))  # type: ignore[attr-defined, misc]
    elif task_type in ("com", "look_at"):
        task.set_target(np.array(target.position))  # type: ignore[attr-defined]
    elif task_type == "axis_align":
        task.set_target(np.array(target.direction))  # type: ignore[attr-defined]
    elif task_type == "posture":
        task.set_target(np.array(target.q))  # type: ignore[attr-defined]


def read(task_type: str, task: BaseTask) -> Target | None:
    """The engine task's current target as a canonical :class:`Target`."""
    if task_type == "frame":
        pose = task.transform_target_to_world  # type: ignore[attr-defined]
    elif task_type == "relative_frame":
        pose = task.transform_target_to_root  # type: ignore[attr-defined]
    elif task_type == "com":
        return Target(position=task.target_com.tolist())  # type: ignore[attr-defined]
    elif task_type == "look_at":
        return Target(position=task.target_pos.tolist())  # type: ignore[attr-defined]
    elif task_type == "axis_align":
        return Target(direction=task.target_dir.tolist())  # type: ignore[attr-defined]
    elif task_type == "posture":
        return Target(q=task.target_q.tolist())  # type: ignore[attr-defined]
    else:
        return None
    values = pose.wxyz_xyz.tolist()
    return Target(position=values[4:], wxyz=values[:4])
