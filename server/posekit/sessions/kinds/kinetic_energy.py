"""``kinetic_energy``: penalise the kinetic energy of the step, ``½ λ Δqᵀ M(q) Δq / dt²``
(:class:`KineticEnergyRegularizationTask`); objective only, no target.
"""

from __future__ import annotations

from typing import Literal

import mujoco
from pydantic import ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from posekit.ik.tasks import KineticEnergyRegularizationTask
from posekit.sessions.kinds.base import Params, TaskKind, TaskSpecBase
from posekit.sessions.specs.types import NonNegativeFloat


class KineticEnergyParams(Params):
    """Penalise the kinetic energy of the step, ½ Δqᵀ M Δq / dt²."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"cost": 0.0001}]})

    cost: NonNegativeFloat = 1e-4


class KineticEnergyTaskSpec(TaskSpecBase):
    """Kinetic-energy regularisation (``KineticEnergyRegularizationTask``); objective only."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"type": "kinetic_energy", "params": {"cost": 0.0001}}]}
    )

    type: Literal["kinetic_energy"]
    target: SkipJsonSchema[None] = Field(None, exclude=True)  # no target
    role: Literal["objective"] = Field("objective", description="Only objective is possible.")
    params: KineticEnergyParams = KineticEnergyParams()


class KineticEnergyKind(TaskKind[KineticEnergyTaskSpec, KineticEnergyRegularizationTask]):
    type = "kinetic_energy"
    spec_model = KineticEnergyTaskSpec
    objective_only = True

    def build(
        self, spec: KineticEnergyTaskSpec, model: mujoco.MjModel, dt: float
    ) -> KineticEnergyRegularizationTask:
        task = KineticEnergyRegularizationTask(spec.params.cost)
        task.set_dt(dt)
        return task
