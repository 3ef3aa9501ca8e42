"""PATCH bodies of tasks and limits: which fields apply depends on the kind.

Inside the server a patch is one loose model (:class:`TaskPatch`, :class:`LimitPatch`);
the API publishes one model per kind (:func:`task_patch_model`, :func:`limit_patch_model`)
whose schema lists exactly the fields that kind takes, so that the OpenAPI document is as
strict as the server: a body that fits no kind is refused by its schema (422), and one
that fits another kind than the task's is refused as not fitting the task (409).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, create_model

from posekit.sessions.kinds.target import Target
from posekit.sessions.specs.types import (
    Cost3,
    Gain,
    LmDamping,
    MujocoName,
    NonNegativeFloat,
    Role,
    Vec3,
)


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
    enabled: StrictBool | None = None
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

    enabled: StrictBool | None = None

    def param_updates(self) -> dict[str, Any]:
        """The params to replace (a null leaves a param as it is)."""
        return {k: v for k, v in (self.model_extra or {}).items() if v is not None}


IDENTITY = frozenset({"frame", "frame_type", "root", "root_type", "joints", "equalities"})
"""Params that name what a task acts on: to change them, remove the task and add one."""


def _optional_fields(params: type[BaseModel], skip: frozenset[str]) -> dict[str, Any]:
    """The fields of ``params`` but ``skip``, each optional (null or absent: unchanged)."""
    fields: dict[str, Any] = {}
    for name, field in params.model_fields.items():
        if name not in skip:
            constrained: Any = field.annotation
            if field.metadata:  # the field's constraints (bounds, strictness) stay
                constrained = Annotated.__class_getitem__((constrained, *field.metadata))  # type: ignore[attr-defined]
            fields[name] = (constrained | None, Field(None, description=field.description))
    return fields


def task_patch_model(
    kind: str, params: type[BaseModel], target: type[Target] | None, objective_only: bool
) -> type[BaseModel]:
    """The PATCH body of one task kind: its params but its identity, its target shape,
    ``enabled`` and ``role``."""
    fields = _optional_fields(params, IDENTITY)
    examples: list[dict[str, Any]] = [{"enabled": False}]
    if target is not None:
        fields["target"] = (target | None, None)
        examples.append({"target": _first_example(target)})
    fields["enabled"] = (StrictBool | None, None)
    role = Literal["objective"] if objective_only else Role
    fields["role"] = (role | None, None)
    config = ConfigDict(
        extra="forbid",
        title=f"{_camel(kind)}TaskPatch",
        json_schema_extra={
            "description": f"A PATCH of a `{kind}` task: the fields it takes (null: unchanged).",
            "examples": examples,  # type: ignore[dict-item]
        },
    )
    return create_model(f"{_camel(kind)}TaskPatch", __config__=config, **fields)


def limit_patch_model(kind: str, params: type[BaseModel]) -> type[BaseModel]:
    """The PATCH body of one limit kind: ``enabled`` and its params, flat."""
    fields = _optional_fields(params, frozenset())
    fields["enabled"] = (StrictBool | None, None)
    config = ConfigDict(
        extra="forbid",
        title=f"{_camel(kind)}LimitPatch",
        json_schema_extra={
            "description": f"A PATCH of a `{kind}` limit: `enabled` and its params, flat "
            "(null: unchanged).",
            "examples": [{"enabled": False}],
        },
    )
    return create_model(f"{_camel(kind)}LimitPatch", __config__=config, **fields)


def _camel(kind: str) -> str:
    return "".join(part.capitalize() for part in kind.split("_"))


def _first_example(model: type[BaseModel]) -> Any:
    extra = model.model_config.get("json_schema_extra")
    examples = extra.get("examples", [{}]) if isinstance(extra, dict) else [{}]
    return examples[0] if isinstance(examples, list) and examples else {}
