"""``dof_freezing``: ``Δq = 0`` on the degrees of freedom of some joints
(:class:`DofFreezingTask`); a hard constraint by default, no target.
"""

from __future__ import annotations

from typing import Literal

import mujoco
from pydantic import ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from posekit.ik.tasks import DofFreezingTask
from posekit.sessions.kinds.base import Params, TaskKind, TaskSpecBase
from posekit.sessions.kinds.resolve import joint_dofs
from posekit.sessions.specs.types import Gain, MujocoName, Role


class DofFreezingParams(Params):
    """Freeze the degrees of freedom of some joints (Δq = 0 on them)."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"joints": ["joint1", "joint7"]}]})

    joints: list[MujocoName] = Field(min_length=1, description="Joint names.")
    gain: Gain = 1.0


class DofFreezingTaskSpec(TaskSpecBase):
    """DoF-freezing task (``DofFreezingTask``), a hard constraint by default."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"name": "keep_base", "type": "dof_freezing", "params": {"joints": ["joint1"]}}
            ]
        }
    )

    type: Literal["dof_freezing"]
    target: SkipJsonSchema[None] = Field(None, exclude=True)  # no target
    role: Role = Field("constraint", description="constraint (default) or objective.")
    params: DofFreezingParams


class DofFreezingKind(TaskKind[DofFreezingTaskSpec, DofFreezingTask]):
    type = "dof_freezing"
    spec_model = DofFreezingTaskSpec

    def build(self, spec: DofFreezingTaskSpec, model: mujoco.MjModel, dt: float) -> DofFreezingTask:
        dofs = [d for name in spec.params.joints for d in joint_dofs(model, name)]
        return DofFreezingTask(model, dofs, spec.params.gain)
