"""Solver settings of a session: QP backend, timestep, damping, rates, tolerance."""

from __future__ import annotations

from typing import Annotated

import qpsolvers
from pydantic import BaseModel, ConfigDict, Field, JsonValue, StrictBool, field_validator

from posekit.sessions.specs.types import NonNegativeFloat

# One definition of each bound, shared by the settings and by their patch.
Timestep = Annotated[
    float,
    Field(ge=1e-5, le=1.0, strict=True, allow_inf_nan=False, description="[s], in [1e-5, 1]."),
]
RateHz = Annotated[float, Field(ge=1.0, le=1000.0, strict=True, description="Steps per second.")]
StreamHz = Annotated[
    float, Field(ge=1.0, le=240.0, strict=True, description="States per second to watchers.")
]
Tolerance = Annotated[
    float,
    Field(gt=0.0, le=1.0, strict=True, description="Park below this max |Δq_i| [rad|m]."),
]


def available_solvers() -> list[str]:
    """QP backends this installation can use (``daqp`` is always there)."""
    return sorted({"daqp", *qpsolvers.available_solvers})


def _solver_enum() -> list[JsonValue]:
    """The installed solvers, as the OpenAPI schema's enum (as strict as the server)."""
    return list(available_solvers())


def _check_solver(name: str | None) -> str | None:
    if name is not None and name not in available_solvers():
        raise ValueError(f"QP solver {name!r} is not installed; available: {available_solvers()}")
    return name


class SolverSettings(BaseModel):
    """How a session solves.

    Each step solves the QP with ``solver``, integrates ``v`` over ``dt`` (1/rate_hz
    when null) and runs at most ``rate_hz`` times per second; watchers get at most
    ``stream_hz`` states per second (bursts of two; a limit that thins only a solve
    faster than the stream, ``rate_hz`` > ``stream_hz``). The session parks when a step's
    largest joint displacement ``max |Δq_i|`` is below ``tolerance`` (a fixed point:
    every task met, or the best compromise between them) and wakes on any change.
    ``paused`` stops solving; q then changes only through ``PUT /q``.
    """

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "solver": "daqp",
                    "dt": None,
                    "damping": 1e-06,
                    "rate_hz": 60.0,
                    "stream_hz": 60.0,
                    "tolerance": 1e-06,
                    "paused": False,
                }
            ]
        },
    )

    solver: str = Field(
        "daqp",
        description="An installed QP backend.",
        json_schema_extra={"enum": _solver_enum()},
    )
    dt: Timestep | None = Field(None, description="[s], in [1e-5, 1]; null means 1/rate_hz.")
    damping: NonNegativeFloat = Field(
        1e-6, description="Levenberg-Marquardt damping added to the Hessian diagonal, in [0, 1e6]."
    )
    rate_hz: RateHz = Field(60.0, description="Solve steps per second.")
    stream_hz: StreamHz = 60.0
    tolerance: Tolerance = Field(
        1e-6, description="Park when max |Δq_i| of a step is below it [rad|m]."
    )
    paused: StrictBool = Field(False, description="Stop solving (manual posing).")

    _check = field_validator("solver")(_check_solver)

    @property
    def step_dt(self) -> float:
        """The integration timestep [s]."""
        return self.dt if self.dt is not None else 1.0 / self.rate_hz


class SolverPatch(BaseModel):
    """Solver settings to change (others stay as they are)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"solver": "quadprog", "rate_hz": 100.0}]},
    )

    solver: str | None = Field(
        None,
        description="An installed QP backend.",
        json_schema_extra={"enum": [*_solver_enum(), None]},
    )
    dt: Timestep | None = None
    damping: NonNegativeFloat | None = None
    rate_hz: RateHz | None = None
    stream_hz: StreamHz | None = None
    tolerance: Tolerance | None = None
    paused: StrictBool | None = None

    _check = field_validator("solver")(_check_solver)

    def apply_to(self, settings: SolverSettings) -> SolverSettings:
        """New validated settings; an explicit ``"dt": null`` resets dt to 1/rate_hz."""
        update = {k: getattr(self, k) for k in self.model_fields_set}
        if update.get("solver", "") is None:
            update.pop("solver")
        for key in ("damping", "rate_hz", "stream_hz", "tolerance", "paused"):
            if update.get(key, "") is None:
                update.pop(key)
        return SolverSettings.model_validate({**settings.model_dump(), **update})
