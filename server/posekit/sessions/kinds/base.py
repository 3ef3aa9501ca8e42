"""What every task kind and limit kind provides, and the fields every spec shares.

A *kind* is one task or limit type of the API (``"frame"``, ``"velocity"``, …): its
pydantic spec model (a variant of the tagged union on ``type``), how it builds its
engine object from a spec and a model, and, for tasks, its target shape, how a target
is read from and written to the engine task, its default name and where its gizmo is
anchored. Each kind is one module of this package; :mod:`posekit.sessions.kinds`
registers them.
"""

from __future__ import annotations

import builtins
import functools
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic, TypeVar

import mujoco
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from posekit.ik.limits import Limit
from posekit.ik.tasks import BaseTask
from posekit.robots.presets import task_name
from posekit.sessions.kinds.patch import limit_patch_model, task_patch_model
from posekit.sessions.kinds.target import Target
from posekit.sessions.kinds.target_shape import TargetShape
from posekit.sessions.specs.types import FrameType, Name, Role


class Params(BaseModel):
    """Base of every kind's params: unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")


class TaskSpecBase(BaseModel):
    """Fields every task spec has (its ``type`` and ``params`` are the kind's)."""

    model_config = ConfigDict(extra="forbid")

    name: Name | None = Field(None, description="Unique in the session; derived when omitted.")
    role: Role = Field("objective", description="objective (weighted) or constraint (exact).")
    enabled: StrictBool = Field(
        True, description="Disabled tasks stay in the stack but are not solved."
    )
    target: Target | None = Field(
        None, description="Target; when omitted, the current value (the task starts satisfied)."
    )
    type: str
    params: Params


class LimitSpecBase(BaseModel):
    """Fields every limit spec has."""

    model_config = ConfigDict(extra="forbid")

    name: Name | None = Field(None, description="Unique in the session; the type when omitted.")
    enabled: StrictBool = True
    type: str
    params: Params


S = TypeVar("S", bound=TaskSpecBase)
T = TypeVar("T", bound=BaseTask)
L = TypeVar("L", bound=LimitSpecBase)


class TaskKind(ABC, Generic[S, T]):
    """One task type: its spec model, engine task, target and naming."""

    type: ClassVar[str]
    spec_model: ClassVar[builtins.type[TaskSpecBase]]
    target_shape: ClassVar[TargetShape | None] = None
    objective_only: ClassVar[bool] = False

    @functools.cached_property
    def patch_model(self) -> builtins.type[BaseModel]:
        """The API's PATCH body of this kind (exactly the fields it takes)."""
        target = self.target_shape.model if self.target_shape is not None else None
        return task_patch_model(
            self.type, params_model(self.spec_model), target, self.objective_only
        )

    @abstractmethod
    def build(self, spec: S, model: mujoco.MjModel, dt: float) -> T:
        """The engine task of ``spec`` (names resolved, values checked; no target set)."""

    def read_target(self, task: T) -> Target:
        """The engine task's current target, canonical."""
        raise TypeError(f"tasks of type {self.type!r} have no target")

    def apply_target(self, task: T, target: Target) -> None:
        """Set a canonical target on the engine task (which validates it again)."""
        raise TypeError(f"tasks of type {self.type!r} have no target")

    def default_name(self, spec: S) -> str:
        """The name a task gets when its spec has none (made unique by the stack)."""
        frame = getattr(spec.params, "frame", None)
        return self.type if frame is None else f"{self.type}_{task_name(frame)}"

    def params(self) -> dict[str, bool]:
        """The kind's params: name → whether a spec must give it."""
        fields = params_model(self.spec_model).model_fields
        return {name: field.is_required() for name, field in fields.items()}

    def gizmo_anchor(self, spec: S) -> tuple[str, FrameType] | None:
        """The robot frame the target is expressed in or drawn at (None: the world)."""
        return None


class LimitKind(ABC, Generic[L]):
    """One limit type: its spec model and engine limit."""

    type: ClassVar[str]
    spec_model: ClassVar[builtins.type[LimitSpecBase]]

    @functools.cached_property
    def patch_model(self) -> builtins.type[BaseModel]:
        """The API's PATCH body of this kind: ``enabled`` and its params, flat."""
        return limit_patch_model(self.type, params_model(self.spec_model))

    @abstractmethod
    def build(self, spec: L, model: mujoco.MjModel) -> Limit:
        """The engine limit of ``spec`` (names resolved, values checked)."""

    def collision_pairs(self, spec: L, model: mujoco.MjModel) -> int:
        """Geom pairs the limit would check each step (counted before it is built)."""
        return 0


def params_model(spec_model: builtins.type[BaseModel]) -> builtins.type[Params]:
    """The params model of a task or limit spec model."""
    annotation = spec_model.model_fields["params"].annotation
    assert isinstance(annotation, builtins.type) and issubclass(annotation, Params)
    return annotation


AnyTaskKind = TaskKind[Any, Any]
AnyLimitKind = LimitKind[Any]
