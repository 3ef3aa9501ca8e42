"""Annotated value types shared by the spec models (finite numbers, vectors, names)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, model_validator
from pydantic.config import JsonDict

# Bounds that keep every QP finite: weights enter squared (cost² ≤ 1e12), and
# coordinates beyond ±10 km (or ±1e4 rad) are no robot's. Numbers are strict: JSON
# true or "1" is refused, not read as 1.0.
MAX_COORDINATE = 1e4
MAX_WEIGHT = 1e6

FiniteFloat = Annotated[
    float,
    Field(strict=True, ge=-MAX_COORDINATE, le=MAX_COORDINATE, allow_inf_nan=False),
]
NonNegativeFloat = Annotated[float, Field(strict=True, ge=0.0, le=MAX_WEIGHT, allow_inf_nan=False)]
PositiveFloat = Annotated[float, Field(strict=True, gt=0.0, le=MAX_WEIGHT, allow_inf_nan=False)]
Gain = Annotated[
    float,
    Field(strict=True, ge=0.0, le=1.0, allow_inf_nan=False, description="Task gain in [0, 1]."),
]
LmDamping = Annotated[
    float,
    Field(
        strict=True,
        ge=0.0,
        le=MAX_WEIGHT,
        allow_inf_nan=False,
        description="Levenberg-Marquardt damping, in [0, 1e6].",
    ),
]
Vec3 = Annotated[list[FiniteFloat], Field(min_length=3, max_length=3)]
Quaternion = Annotated[
    list[FiniteFloat],
    Field(min_length=4, max_length=4, description="Unit quaternion (w, x, y, z)."),
]
NonNegativeVec3 = Annotated[list[NonNegativeFloat], Field(min_length=3, max_length=3)]
Cost3 = NonNegativeFloat | NonNegativeVec3
Vector = Annotated[list[FiniteFloat], Field(max_length=10_000)]

NAME_PATTERN = r"^[A-Za-z0-9_.-]{1,64}$"
Name = Annotated[
    str,
    Field(
        pattern=NAME_PATTERN,
        description="1-64 characters among letters, digits, '_', '.', '-'.",
    ),
]
MujocoName = Annotated[str, Field(min_length=1, max_length=256)]
FrameType = Literal["body", "geom", "site"]
Role = Literal["objective", "constraint"]


class LeaveOut(BaseModel):
    """A model whose optional fields are left out when not given, never sent as null:
    the schema does not list null for them, and a null is refused with that reason."""

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        if isinstance(data, dict):
            nulls = sorted(str(key) for key, value in data.items() if value is None)
            if nulls:
                raise ValueError(f"{', '.join(nulls)}: null is not a value here; leave it out")
        return data


def exactly_one_of(*fields: str) -> JsonDict:
    """JSON-schema keywords: exactly one of ``fields`` is given."""
    return {"oneOf": [{"required": [field]} for field in fields]}
