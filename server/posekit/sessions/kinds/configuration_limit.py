"""Limit ``configuration``: joint ranges (:class:`ConfigurationLimit`),
``q_min + d ≤ q ⊕ Δq ≤ q_max − d`` approached at a fraction ``gain`` of the margin per step.
"""

from __future__ import annotations

from typing import Literal

import mujoco
from pydantic import ConfigDict, Field

from posekit.ik.limits import ConfigurationLimit, Limit
from posekit.sessions.kinds.base import LimitKind, LimitSpecBase, Params
from posekit.sessions.specs.types import NonNegativeFloat


class ConfigurationLimitParams(Params):
    """Joint ranges (``ConfigurationLimit``)."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"gain": 0.95, "min_distance_from_limits": 0.01}]}
    )

    gain: float = Field(
        0.95, gt=0.0, le=1.0, strict=True, description="Fraction of the margin per step."
    )
    min_distance_from_limits: NonNegativeFloat = Field(0.0, description="[rad] or [m].")


class ConfigurationLimitSpec(LimitSpecBase):
    """Joint ranges."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"name": "configuration", "type": "configuration"}]}
    )

    type: Literal["configuration"]
    params: ConfigurationLimitParams = ConfigurationLimitParams()


class ConfigurationLimitKind(LimitKind[ConfigurationLimitSpec]):
    type = "configuration"
    spec_model = ConfigurationLimitSpec

    def build(self, spec: ConfigurationLimitSpec, model: mujoco.MjModel) -> Limit:
        p = spec.params
        return ConfigurationLimit(model, p.gain, p.min_distance_from_limits)
