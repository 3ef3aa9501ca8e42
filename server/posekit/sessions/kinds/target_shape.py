"""Target shapes: what a kind's target looks like, and how an update completes it.

A shape checks an update (:meth:`TargetShape.check`), completes it on plain values with
the current target's (:meth:`TargetShape.complete`) and normalises it to the canonical
target (:mod:`~posekit.sessions.kinds.target` lists the shapes and their models).
"""

from __future__ import annotations

import math
import operator
from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping
from typing import Any, ClassVar

import mujoco

from posekit.ik.exceptions import InvalidTarget
from posekit.ik.keyframes import keyframe_q
from posekit.sessions.errors import InvalidRequest
from posekit.sessions.kinds.target import (
    TARGET_FIELDS,
    TARGET_MODELS,
    DirectionTarget,
    GizmoShape,
    PointTarget,
    PoseTarget,
    PostureTarget,
    Target,
    field_values,
    target_of_values,
)


def unit(values: list[float], what: str) -> list[float]:
    """``values / ‖values‖``; :class:`InvalidTarget` when the norm is below 1e-9."""
    # Plain loops: the same floats as sum(map(operator.mul, ...)) (the squares added in
    # order) and a comprehension, at 60 % of their cost (a moved pose target comes here).
    squares = 0.0
    for v in values:
        squares += v * v
    norm = math.sqrt(squares)
    if norm < 1e-9:
        raise InvalidTarget(f"{what} must be non-zero, got {values}")
    scaled: list[float] = []
    for v in values:
        scaled.append(v / norm)
    return scaled


def is_unit(values: list[float] | None) -> bool:
    """Whether ``values`` is a vector of norm 1 (to 1e-12), as :func:`unit` makes them."""
    return values is not None and abs(sum(map(operator.mul, values, values)) - 1.0) <= 1e-12


TargetValues = tuple[Any, ...]
"""A target's field values in :data:`TARGET_FIELDS` order (None where not set)."""


class TargetShape(ABC):
    """What a kind's target looks like, and how an update completes it.

    An update is completed on plain values (:meth:`complete`): the field values given
    by name, and the current target's values; :meth:`merge` does the same for models.
    """

    model: ClassVar[type[Target]]
    """The API's model of this shape (its schema lists exactly :attr:`fields`)."""
    fields: ClassVar[tuple[str, ...]]
    field_set: ClassVar[frozenset[str]]  # the same, as a set (derived)
    model_index: ClassVar[int]  # the index of :attr:`model` in TARGET_MODELS (derived)
    combine: ClassVar[str] = " or "  # how the fields are listed in errors
    gizmo: ClassVar[GizmoShape | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Derive :attr:`field_set` and :attr:`model_index` from a shape's declared
        :attr:`fields` and :attr:`model`."""
        super().__init_subclass__(**kwargs)
        cls.field_set = frozenset(cls.fields)
        cls.model_index = TARGET_MODELS.index(cls.model)

    def check(self, update: Target, where: str) -> None:
        """Raise :class:`InvalidRequest` unless ``update`` sets only (and some of) our fields."""
        self.check_given(update.given(), where)  # (in field order)

    def check_given(self, given: Collection[str], where: str) -> None:
        """:meth:`check` of an update that sets the fields named in ``given``."""
        if given and self.field_set.issuperset(given):
            return
        wrong = [f for f in TARGET_FIELDS if f in given and f not in self.fields]
        if wrong or not given:
            what = f"fields {wrong}" if wrong else "no field"
            raise InvalidRequest(
                f"target of {where} has {what}; it takes {self.combine.join(self.fields)}"
            )

    def merge(
        self, current: Target | None, update: Target, model: mujoco.MjModel, where: str
    ) -> Target:
        """The canonical target after applying ``update`` to ``current``; ``update``
        itself when it is canonical already (a replayed change)."""
        self.check(update, where)
        if isinstance(update, self.model) and self._canonical(update, model):
            return update
        given = {k: v for k in TARGET_FIELDS if (v := getattr(update, k)) is not None}
        values = self.complete(
            None if current is None else field_values(current), given, model, where
        )
        return target_of_values(self.model_index, values)

    def _canonical(self, target: Target, model: mujoco.MjModel) -> bool:
        """Whether ``target`` (of this shape's model, checked) is complete and normalised."""
        return False

    @abstractmethod
    def complete(
        self,
        current: TargetValues | None,
        given: Mapping[str, Any],
        model: mujoco.MjModel,
        where: str,
    ) -> TargetValues:
        """The canonical target's values after an update that sets the fields ``given``
        (valid values of :class:`Target` fields, checked by :meth:`check_given`) to the
        current target's values ``current`` (canonical; None: no target yet)."""


class PoseShape(TargetShape):
    model = PoseTarget
    fields = ("position", "wxyz")
    combine = " and/or "
    gizmo: ClassVar[GizmoShape | None] = "pose"

    def complete(
        self,
        current: TargetValues | None,
        given: Mapping[str, Any],
        model: mujoco.MjModel,
        where: str,
    ) -> TargetValues:
        position = given.get("position") or (current[0] if current else None)
        wxyz = given.get("wxyz") or (current[1] if current else None)
        if position is None or wxyz is None:
            raise InvalidRequest(f"target of {where} needs both position and wxyz")
        # Values are validated already (finite, right sizes): no model is built here.
        return (list(position), unit(list(wxyz), "wxyz"), None, None, None)

    def _canonical(self, target: Target, model: mujoco.MjModel) -> bool:
        return target.position is not None and is_unit(target.wxyz)


class PointShape(TargetShape):
    model = PointTarget
    fields = ("position",)
    gizmo: ClassVar[GizmoShape | None] = "point"

    def complete(
        self,
        current: TargetValues | None,
        given: Mapping[str, Any],
        model: mujoco.MjModel,
        where: str,
    ) -> TargetValues:
        return (list(given.get("position") or []), None, None, None, None)

    def _canonical(self, target: Target, model: mujoco.MjModel) -> bool:
        return True


class DirectionShape(TargetShape):
    model = DirectionTarget
    fields = ("direction",)
    gizmo: ClassVar[GizmoShape | None] = "direction"

    def complete(
        self,
        current: TargetValues | None,
        given: Mapping[str, Any],
        model: mujoco.MjModel,
        where: str,
    ) -> TargetValues:
        return (None, None, unit(list(given.get("direction") or []), "direction"), None, None)

    def _canonical(self, target: Target, model: mujoco.MjModel) -> bool:
        return is_unit(target.direction)


class PostureShape(TargetShape):
    model = PostureTarget
    fields = ("q", "keyframe")

    def check_given(self, given: Collection[str], where: str) -> None:
        super().check_given(given, where)
        if len(given) != 1:
            raise InvalidRequest(f"target of {where} takes q or keyframe, not both")

    def complete(
        self,
        current: TargetValues | None,
        given: Mapping[str, Any],
        model: mujoco.MjModel,
        where: str,
    ) -> TargetValues:
        keyframe = given.get("keyframe")
        if keyframe is not None:
            return (None, None, None, keyframe_q(model, keyframe).tolist(), None)
        q = list(given.get("q") or [])
        if len(q) != model.nq:
            raise InvalidTarget(f"posture target q must have nq={model.nq} values, got {len(q)}")
        return (None, None, None, q, None)

    def _canonical(self, target: Target, model: mujoco.MjModel) -> bool:
        return target.q is not None and len(target.q) == model.nq
