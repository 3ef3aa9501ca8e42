"""Limit ``collision_avoidance``: keep geom pairs apart (:class:`CollisionAvoidanceLimit`),
one row per pair, ``G Δq ≤ γ(d − d_min)`` in [m] for pairs within the detection distance.
"""

from __future__ import annotations

from typing import Annotated, Literal

import mujoco
from pydantic import ConfigDict, Field

from posekit.ik.limits import CollisionAvoidanceLimit, Limit
from posekit.ik.limits.geom_pairs import expand_geom_pairs
from posekit.sessions.kinds.base import LimitKind, LimitSpecBase, Params
from posekit.sessions.specs.types import FiniteFloat, MujocoName

GeomSide = Annotated[list[MujocoName], Field(min_length=1)]


class CollisionAvoidanceParams(Params):
    """Keep geom pairs apart (``CollisionAvoidanceLimit``)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "geom_pairs": [[["hand", "left_finger", "right_finger"], ["floor"]]],
                    "minimum_distance_from_collisions": 0.01,
                    "collision_detection_distance": 0.05,
                }
            ]
        }
    )

    geom_pairs: Annotated[list[tuple[GeomSide, GeomSide]], Field(min_length=1)] = Field(
        description="Pair groups [A, B]: lists of geom or body names; every geom of A "
        "against every geom of B."
    )
    gain: float = Field(0.85, gt=0.0, le=1.0, strict=True)
    minimum_distance_from_collisions: FiniteFloat = Field(
        0.005, description="[m]; negative allows that much penetration."
    )
    collision_detection_distance: FiniteFloat = Field(
        0.01, description="[m]; at least minimum_distance_from_collisions."
    )
    bound_relaxation: FiniteFloat = Field(0.0, description="[m].")


class CollisionAvoidanceLimitSpec(LimitSpecBase):
    """Collision avoidance between geom groups."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "type": "collision_avoidance",
                    "params": {"geom_pairs": [[["hand", "left_finger"], ["floor"]]]},
                }
            ]
        }
    )
    type: Literal["collision_avoidance"]
    params: CollisionAvoidanceParams


class CollisionAvoidanceLimitKind(LimitKind[CollisionAvoidanceLimitSpec]):
    type = "collision_avoidance"
    spec_model = CollisionAvoidanceLimitSpec

    def collision_pairs(self, spec: CollisionAvoidanceLimitSpec, model: mujoco.MjModel) -> int:
        return len(
            expand_geom_pairs(model, [(list(a), list(b)) for a, b in spec.params.geom_pairs])
        )

    def build(self, spec: CollisionAvoidanceLimitSpec, model: mujoco.MjModel) -> Limit:
        p = spec.params
        pairs = [(list(a), list(b)) for a, b in p.geom_pairs]
        return CollisionAvoidanceLimit(
            model,
            pairs,
            p.gain,
            p.minimum_distance_from_collisions,
            p.collision_detection_distance,
            p.bound_relaxation,
        )
