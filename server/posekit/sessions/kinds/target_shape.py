"""Target shapes: what a kind's target looks like, and how an update completes it.

A shape checks an update (:meth:`TargetShape.check`) and completes it with the current
target into the canonical target (:meth:`TargetShape.merge`;
:mod:`~posekit.sessions.kinds.target` lists the shapes and their models).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Collection
from typing import ClassVar

import mujoco

from posekit.ik.exceptions import InvalidTarget
from posekit.ik.keyframes import keyframe_q
from posekit.sessions.errors import InvalidRequest
from posekit.sessions.kinds.target import (
    TARGET_FIELDS,
    DirectionTarget,
    GizmoShape,
    PointTarget,
    PoseTarget,
    PostureTarget,
    Target,
)


def unit(values: list[float], what: str) -> list[float]:
    """``values / ‖values‖``; :class:`InvalidTarget` when the norm is below 1e-9."""
    norm = math.sqrt(sum(v * v for v in values))
    if norm < 1e-9:
        raise InvalidTarget(f"{what} must be non-zero, got {values}")
    return [v / norm for v in values]


class TargetShape(ABC):
    """What a kind's target looks like, and how an update completes it."""

    model: ClassVar[type[Target]]
    """The API's model of this shape (its schema lists exactly :attr:`fields`)."""
    fields: ClassVar[tuple[str, ...]]
    combine: ClassVar[str] = " or "  # how the fields are listed in errors
    gizmo: ClassVar[GizmoShape | None] = None

    def check(self, update: Target, where: str) -> None:
        """Raise :class:`InvalidRequest` unless ``update`` sets only (and some of) our fields."""
        self.check_given(update.given(), where)

    def check_given(self, given: Collection[str], where: str) -> None:
        """:meth:`check` of an update that sets the fields named in ``given``."""
        wrong = [f for f in TARGET_FIELDS if f in given and f not in self.fields]
        if wrong or not given:
            what = f"fields {wrong}" if wrong else "no field"
            raise InvalidRequest(
                f"target of {where} has {what}; it takes {self.combine.join(self.fields)}"
            )

    def merge(
        self, current: Target | None, update: Target, model: mujoco.MjModel, where: str
    ) -> Target:
        """The canonical target after applying ``update`` to ``current`` (canonical, or
        None: no target yet)."""
        self.check(update, where)
        return self.complete(current, update, model, where)

    @abstractmethod
    def complete(
        self, current: Target | None, update: Target, model: mujoco.MjModel, where: str
    ) -> Target:
        """:meth:`merge` of a checked update."""


class PoseShape(TargetShape):
    model = PoseTarget
    fields = ("position", "wxyz")
    combine = " and/or "
    gizmo: ClassVar[GizmoShape | None] = "pose"

    def complete(
        self, current: Target | None, update: Target, model: mujoco.MjModel, where: str
    ) -> Target:
        position = update.position or (current.position if current else None)
        wxyz = update.wxyz or (current.wxyz if current else None)
        if position is None or wxyz is None:
            raise InvalidRequest(f"target of {where} needs both position and wxyz")
        return PoseTarget.model_construct(position=list(position), wxyz=unit(list(wxyz), "wxyz"))


class PointShape(TargetShape):
    model = PointTarget
    fields = ("position",)
    gizmo: ClassVar[GizmoShape | None] = "point"

    def complete(
        self, current: Target | None, update: Target, model: mujoco.MjModel, where: str
    ) -> Target:
        return PointTarget.model_construct(position=list(update.position or []))


class DirectionShape(TargetShape):
    model = DirectionTarget
    fields = ("direction",)
    gizmo: ClassVar[GizmoShape | None] = "direction"

    def complete(
        self, current: Target | None, update: Target, model: mujoco.MjModel, where: str
    ) -> Target:
        direction = unit(list(update.direction or []), "direction")
        return DirectionTarget.model_construct(direction=direction)


class PostureShape(TargetShape):
    model = PostureTarget
    fields = ("q", "keyframe")

    def check_given(self, given: Collection[str], where: str) -> None:
        super().check_given(given, where)
        if len(given) != 1:
            raise InvalidRequest(f"target of {where} takes q or keyframe, not both")

    def complete(
        self, current: Target | None, update: Target, model: mujoco.MjModel, where: str
    ) -> Target:
        if update.keyframe is not None:
            return PostureTarget.model_construct(q=keyframe_q(model, update.keyframe).tolist())
        q = list(update.q or [])
        if len(q) != model.nq:
            raise InvalidTarget(f"posture target q must have nq={model.nq} values, got {len(q)}")
        return PostureTarget.model_construct(q=q)
