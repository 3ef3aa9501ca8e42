"""What a robot offers to IK: frames, joints, keyframes, equalities (the API's robot view)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import mujoco
from pydantic import BaseModel, ConfigDict, Field

from posekit.robots.naming import (
    EQUALITY_TYPES,
    JOINT_DOFS,
    default_keyframe,
    equality_name,
    is_floating_base,
    joint_type,
    keyframe_names,
    named,
)
from posekit.robots.presets import preset_with_reasons
from posekit.robots.registry import RobotEntry


class JointInfo(BaseModel):
    """One joint: its type, range and where it sits in ``q`` (nq) and in velocities (nv)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "joint4",
                    "type": "hinge",
                    "limited": True,
                    "range": [-3.07, -0.07],
                    "qpos_adr": 3,
                    "dof_adr": 3,
                    "nq": 1,
                    "nv": 1,
                }
            ]
        }
    )

    name: str = Field(description="Joint name ('' when the joint is unnamed).")
    type: str = Field(description="hinge | slide | ball | free.")
    limited: bool = Field(description="Whether the range is enforced.")
    range: list[float] | None = Field(
        description="[lower, upper] in rad (hinge) or m (slide); ball: [0, max angle] in "
        "rad; None when unlimited."
    )
    qpos_adr: int = Field(description="Index of the first coordinate in q.")
    dof_adr: int = Field(description="Index of the first degree of freedom in v.")
    nq: int = Field(description="Number of coordinates in q.")
    nv: int = Field(description="Number of degrees of freedom.")


class EqualityInfo(BaseModel):
    """One equality constraint of the model."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"name": "#0", "type": "joint", "active": True}]}
    )

    name: str = Field(description="Equality name, or '#<id>' when it is unnamed.")
    type: str = Field(description="connect | weld | joint | tendon | flex.")
    active: bool = Field(description="Whether it is active in the model's default state.")


class Frames(BaseModel):
    """Named frames a task can refer to, by type."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "body": ["world", "base", "hand"],
                    "site": ["ee", "wrist_cam"],
                    "geom": ["floor", "hand"],
                }
            ]
        }
    )

    body: list[str]
    site: list[str]
    geom: list[str]


class RobotSummary(BaseModel):
    """A robot as listed by ``GET /api/robots`` (no model is loaded to list it)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "universal_robots_ur5e",
                    "title": "Universal Robots UR5e",
                    "category": "arm",
                    "source": "menagerie",
                    "entries": ["scene", "ur5e"],
                    "default_entry": "scene",
                }
            ]
        }
    )

    name: str = Field(description="Registry name used in URLs and session specs.")
    title: str = Field(description="Human-readable name.")
    category: str = Field(description="arm, humanoid, hand, quadruped, …")
    source: str = Field(
        description="builtin (this repository), menagerie, local (the server's robot files: "
        "--robots DIR, a file given to posekit up, RobotRegistry.add_file) or uploaded "
        "(POST /api/robots)."
    )
    entries: list[str] = Field(description="Entry points (top-level XML files).")
    default_entry: str = Field(description="Entry point used unless one is given.")
    available: Literal["here", "download", "unavailable"] = Field(
        "here",
        description="here: loads from this machine; download: a Menagerie robot fetched "
        "on first use; unavailable: a Menagerie robot neither in MENAGERIE_ROOT nor in the "
        "download cache while that is set or downloads are off (a session on it is a 503).",
    )

    @classmethod
    def of(cls, entry: RobotEntry, available: str = "here") -> RobotSummary:
        return cls.model_validate(
            {
                "name": entry.name,
                "title": entry.title,
                "category": entry.category,
                "source": entry.source,
                "entries": list(entry.entries),
                "default_entry": entry.default_entry,
                "available": available,
            }
        )


class RobotDescription(RobotSummary):
    """A loaded robot: everything a client needs to build tasks and limits by name."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "arm7",
                    "title": "posekit arm7 (7-DoF arm, built-in)",
                    "category": "arm",
                    "source": "builtin",
                    "entries": ["arm7"],
                    "default_entry": "arm7",
                    "entry": "arm7",
                    "nq": 7,
                    "nv": 7,
                    "floating_base": False,
                    "frames": {
                        "body": ["world", "base", "hand"],
                        "site": ["ee", "wrist_cam"],
                        "geom": ["floor"],
                    },
                    "joints": [
                        {
                            "name": "joint1",
                            "type": "hinge",
                            "limited": True,
                            "range": [-2.9, 2.9],
                            "qpos_adr": 0,
                            "dof_adr": 0,
                            "nq": 1,
                            "nv": 1,
                        }
                    ],
                    "keyframes": ["home"],
                    "default_keyframe": "home",
                    "equalities": [],
                    "preset": [
                        {
                            "name": "ee",
                            "type": "frame",
                            "params": {
                                "frame": "ee",
                                "frame_type": "site",
                                "position_cost": 1.0,
                                "orientation_cost": 1.0,
                            },
                        },
                        {"name": "posture", "type": "posture", "params": {"cost": 0.001}},
                    ],
                    "preset_reasons": {
                        "ee": "site 'ee': its name says end effector ('ee')",
                        "posture": "every robot: a weak pull towards the start pose settles "
                        "the joints the other tasks leave free",
                    },
                    "notes": [],
                }
            ]
        }
    )

    entry: str = Field(description="The entry point described.")
    nq: int = Field(description="Size of the configuration vector q.")
    nv: int = Field(description="Number of degrees of freedom (size of velocities).")
    floating_base: bool = Field(description="Whether the model has a free joint.")
    frames: Frames
    joints: list[JointInfo]
    keyframes: list[str] = Field(description="Named keyframes.")
    default_keyframe: str | None = Field(
        description="Keyframe new sessions start from (None: the model's qpos0)."
    )
    equalities: list[EqualityInfo]
    preset: list[dict[str, Any]] = Field(
        description="Task specs of the default preset a new session gets."
    )
    preset_reasons: dict[str, str] = Field(
        default_factory=dict,
        description="Each preset task's name → which frame it holds and why that frame was "
        "chosen (its name, or a leaf of the kinematic tree when no name says end effector).",
    )
    notes: list[str] = Field(
        default_factory=list,
        description="What posekit changed or left out to serve a robot from files (URDF "
        "meshes in formats MuJoCo cannot read, …).",
    )


def describe_model(
    entry: RobotEntry, entry_point: str, model: mujoco.MjModel, notes: Sequence[str] = ()
) -> RobotDescription:
    """The :class:`RobotDescription` of a compiled model (``notes``: see the field)."""
    joints = []
    for j in range(model.njnt):
        kind = joint_type(model, j)
        limited = bool(model.jnt_limited[j]) and kind != "free"
        joints.append(
            JointInfo(
                name=model.joint(j).name,
                type=kind,
                limited=limited,
                range=[float(v) for v in model.jnt_range[j]] if limited else None,
                qpos_adr=int(model.jnt_qposadr[j]),
                dof_adr=int(model.jnt_dofadr[j]),
                nq={"free": 7, "ball": 4}.get(kind, 1),
                nv=JOINT_DOFS[kind],
            )
        )
    preset = preset_with_reasons(model)
    equalities = [
        EqualityInfo(
            name=equality_name(model, i),
            type=EQUALITY_TYPES.get(int(model.eq_type[i]), str(int(model.eq_type[i]))),
            active=bool(model.eq_active0[i]),
        )
        for i in range(model.neq)
    ]
    return RobotDescription(
        **RobotSummary.of(entry).model_dump(),
        entry=entry_point,
        nq=model.nq,
        nv=model.nv,
        floating_base=is_floating_base(model),
        frames=Frames(
            body=named(model, mujoco.mjtObj.mjOBJ_BODY, model.nbody),
            site=named(model, mujoco.mjtObj.mjOBJ_SITE, model.nsite),
            geom=named(model, mujoco.mjtObj.mjOBJ_GEOM, model.ngeom),
        ),
        joints=joints,
        keyframes=keyframe_names(model),
        default_keyframe=default_keyframe(model),
        equalities=equalities,
        preset=[task for task, _ in preset],
        preset_reasons={task["name"]: why for task, why in preset},
        notes=list(notes),
    )
