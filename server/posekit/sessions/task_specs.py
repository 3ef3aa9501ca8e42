"""Task specs: a tagged union on ``type``, one variant per engine task.

Every spec is ``{name, type, role, enabled, params, target}``. Frames, joints and
equalities are named, never given by index. ``role`` is ``objective`` (weighted in the
least-squares cost) or ``constraint`` (enforced exactly, ``J Δq = −α e``). Costs are
per unit of task error: [cost]/[m] for positions, [cost]/[rad] for angles.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from posekit.sessions.targets import Target
from posekit.sessions.types import (
    Cost3,
    FrameType,
    Gain,
    LmDamping,
    MujocoName,
    Name,
    NonNegativeFloat,
    Role,
    Vec3,
)

PostureCost = NonNegativeFloat | dict[MujocoName, NonNegativeFloat]


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FrameParams(_Params):
    """Pose of a frame in the world."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "frame": "ee",
                    "frame_type": "site",
                    "position_cost": 1.0,
                    "orientation_cost": [1.0, 1.0, 0.0],
                }
            ]
        }
    )

    frame: MujocoName = Field(description="Name of the body, geom or site.")
    frame_type: FrameType = Field("site", description="body | geom | site.")
    position_cost: Cost3 = Field(1.0, description="[cost]/[m]: a scalar or one per axis.")
    orientation_cost: Cost3 = Field(1.0, description="[cost]/[rad]: a scalar or one per axis.")
    gain: Gain = 1.0
    lm_damping: LmDamping = 0.0


class RelativeFrameParams(FrameParams):
    """Pose of a frame in another (root) frame of the robot."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "frame": "left_hand",
                    "frame_type": "site",
                    "root": "torso",
                    "root_type": "body",
                    "position_cost": 1.0,
                    "orientation_cost": 0.0,
                }
            ]
        }
    )

    root: MujocoName = Field(description="Name of the root body, geom or site.")
    root_type: FrameType = Field("body", description="body | geom | site.")


class ComParams(_Params):
    """Position of the center of mass."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"cost": [1.0, 1.0, 0.0]}]})

    cost: Cost3 = Field(1.0, description="[cost]/[m]: a scalar or one per axis.")
    gain: Gain = 1.0
    lm_damping: LmDamping = 0.0


class PointingParams(_Params):
    """Where a unit axis of a frame points."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"frame": "wrist_cam", "frame_type": "site", "axis": [0, 0, -1], "cost": 0.5}
            ]
        }
    )

    frame: MujocoName = Field(description="Name of the body, geom or site.")
    frame_type: FrameType = Field("site", description="body | geom | site.")
    axis: Vec3 = Field([0.0, 0.0, 1.0], description="Axis in the frame (normalised).")
    cost: NonNegativeFloat = Field(1.0, description="Unitless error's cost.")
    gain: Gain = 1.0
    lm_damping: LmDamping = 0.0


class EqualityParams(_Params):
    """Residuals of MuJoCo equality constraints."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"equalities": ["#0", "#1"], "cost": 10.0}]}
    )

    equalities: list[MujocoName] | None = Field(
        None, description="Equality names ('#<id>' for unnamed ones); all when null."
    )
    cost: NonNegativeFloat | list[NonNegativeFloat] = Field(
        1.0, description="A scalar, or one per listed equality."
    )
    gain: Gain = 1.0
    lm_damping: LmDamping = 0.0


class DofFreezingParams(_Params):
    """Freeze the degrees of freedom of some joints (Δq = 0 on them)."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"joints": ["joint1", "joint7"]}]})

    joints: list[MujocoName] = Field(min_length=1, description="Joint names.")
    gain: Gain = 1.0


class PostureParams(_Params):
    """Joint configuration toward a target posture (free joints excluded)."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"cost": 0.001}, {"cost": {"joint1": 0.1, "joint2": 0.01}}]}
    )

    cost: PostureCost = Field(
        1e-2, description="A scalar for every joint, or {joint: cost} (others get 0)."
    )
    gain: Gain = 1.0
    lm_damping: LmDamping = 0.0


class DampingParams(_Params):
    """Penalise joint displacement per step (free joints excluded)."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"cost": 0.001}]})

    cost: PostureCost = Field(
        1e-3, description="A scalar for every joint, or {joint: cost} (others get 0)."
    )


class KineticEnergyParams(_Params):
    """Penalise the kinetic energy of the step, ½ Δqᵀ M Δq / dt²."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"cost": 0.0001}]})

    cost: NonNegativeFloat = 1e-4


class _TaskSpecBase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Name | None = Field(None, description="Unique in the session; derived when omitted.")
    role: Role = Field("objective", description="objective (weighted) or constraint (exact).")
    enabled: bool = Field(True, description="Disabled tasks stay in the stack but are not solved.")
    target: Target | None = Field(
        None, description="Target; when omitted, the current value (the task starts satisfied)."
    )


class FrameTaskSpec(_TaskSpecBase):
    """Frame task (``FrameTask``): a pose target for a body, geom or site."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "ee",
                    "type": "frame",
                    "params": {
                        "frame": "ee",
                        "frame_type": "site",
                        "position_cost": 1.0,
                        "orientation_cost": 0.5,
                    },
                    "target": {"position": [0.45, 0.0, 0.35], "wxyz": [0.0, 1.0, 0.0, 0.0]},
                }
            ]
        }
    )
    type: Literal["frame"]
    params: FrameParams


class RelativeFrameTaskSpec(_TaskSpecBase):
    """Relative frame task (``RelativeFrameTask``): a pose in another robot frame."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "hand_in_torso",
                    "type": "relative_frame",
                    "params": {"frame": "left_hand", "root": "torso"},
                    "target": {"position": [0.3, 0.2, -0.1], "wxyz": [1, 0, 0, 0]},
                }
            ]
        }
    )

    type: Literal["relative_frame"]
    params: RelativeFrameParams


class ComTaskSpec(_TaskSpecBase):
    """Center-of-mass task (``ComTask``)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "com",
                    "type": "com",
                    "params": {"cost": 1.0},
                    "target": {"position": [0.0, 0.0, 0.8]},
                }
            ]
        }
    )

    type: Literal["com"]
    params: ComParams = ComParams()


class LookAtTaskSpec(_TaskSpecBase):
    """Look-at task (``LookAtTask``): aim a frame axis at a point."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "camera",
                    "type": "look_at",
                    "params": {"frame": "wrist_cam", "axis": [0, 0, -1], "cost": 0.5},
                    "target": {"position": [0.6, 0.0, 0.0]},
                }
            ]
        }
    )
    type: Literal["look_at"]
    params: PointingParams


class AxisAlignTaskSpec(_TaskSpecBase):
    """Axis-align task (``AxisAlignTask``): point a frame axis along a direction."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "tool_down",
                    "type": "axis_align",
                    "params": {"frame": "ee", "axis": [0, 0, 1]},
                    "target": {"direction": [0, 0, -1]},
                }
            ]
        }
    )

    type: Literal["axis_align"]
    params: PointingParams


class EqualityTaskSpec(_TaskSpecBase):
    """Equality-constraint task (``EqualityConstraintTask``)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"type": "equality", "role": "constraint", "params": {"equalities": ["#0"]}}
            ]
        }
    )

    type: Literal["equality"]
    params: EqualityParams = EqualityParams()


class DofFreezingTaskSpec(_TaskSpecBase):
    """DoF-freezing task (``DofFreezingTask``), a hard constraint by default."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"name": "keep_base", "type": "dof_freezing", "params": {"joints": ["joint1"]}}
            ]
        }
    )

    type: Literal["dof_freezing"]
    role: Role = Field("constraint", description="constraint (default) or objective.")
    params: DofFreezingParams


class PostureTaskSpec(_TaskSpecBase):
    """Posture task (``PostureTask``)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "posture",
                    "type": "posture",
                    "params": {"cost": 0.001},
                    "target": {"keyframe": "home"},
                }
            ]
        }
    )

    type: Literal["posture"]
    params: PostureParams = PostureParams()


class DampingTaskSpec(_TaskSpecBase):
    """Damping task (``DampingTask``)."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"type": "damping", "params": {"cost": 0.001}}]}
    )

    type: Literal["damping"]
    params: DampingParams = DampingParams()


class KineticEnergyTaskSpec(_TaskSpecBase):
    """Kinetic-energy regularisation (``KineticEnergyRegularizationTask``); objective only."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"type": "kinetic_energy", "params": {"cost": 0.0001}}]}
    )

    type: Literal["kinetic_energy"]
    role: Literal["objective"] = Field("objective", description="Only objective is possible.")
    params: KineticEnergyParams = KineticEnergyParams()


TaskSpec = Annotated[
    FrameTaskSpec
    | RelativeFrameTaskSpec
    | ComTaskSpec
    | LookAtTaskSpec
    | AxisAlignTaskSpec
    | EqualityTaskSpec
    | DofFreezingTaskSpec
    | PostureTaskSpec
    | DampingTaskSpec
    | KineticEnergyTaskSpec,
    Field(discriminator="type"),
]
TASK_SPEC_ADAPTER: TypeAdapter[TaskSpec] = TypeAdapter(TaskSpec)
TASK_TYPES: tuple[str, ...] = (
    "frame",
    "relative_frame",
    "com",
    "look_at",
    "axis_align",
    "equality",
    "dof_freezing",
    "posture",
    "damping",
    "kinetic_energy",
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
    enabled: bool | None = None
    role: Role | None = None

    def param_updates(self) -> dict[str, object]:
        """The set fields that belong to ``params``."""
        fields = self.model_fields_set - {"target", "enabled", "role"}
        return {k: getattr(self, k) for k in fields if getattr(self, k) is not None}
