"""Names of MuJoCo objects as the API shows them.

Frames, joints, geoms and keyframes are referred to by their MuJoCo names; objects
without a name are not addressable, except equality constraints, which Menagerie
models often leave unnamed: an unnamed equality ``i`` is called ``"#i"``.
"""

from __future__ import annotations

import mujoco

from posekit.ik.joints import DOF_WIDTH, QPOS_WIDTH

EQUALITY_TYPES = {
    int(mujoco.mjtEq.mjEQ_CONNECT): "connect",
    int(mujoco.mjtEq.mjEQ_WELD): "weld",
    int(mujoco.mjtEq.mjEQ_JOINT): "joint",
    int(mujoco.mjtEq.mjEQ_TENDON): "tendon",
    int(mujoco.mjtEq.mjEQ_FLEX): "flex",
}

JOINT_TYPES = {
    int(mujoco.mjtJoint.mjJNT_FREE): "free",
    int(mujoco.mjtJoint.mjJNT_BALL): "ball",
    int(mujoco.mjtJoint.mjJNT_SLIDE): "slide",
    int(mujoco.mjtJoint.mjJNT_HINGE): "hinge",
}

# Degrees of freedom and coordinates per joint type name.
JOINT_DOFS = {JOINT_TYPES[kind]: width for kind, width in DOF_WIDTH.items()}
JOINT_QPOS = {JOINT_TYPES[kind]: width for kind, width in QPOS_WIDTH.items()}


def named(model: mujoco.MjModel, obj: mujoco.mjtObj, count: int) -> list[str]:
    """The non-empty names of ``count`` objects of one type, in id order."""
    names = (mujoco.mj_id2name(model, obj, i) for i in range(count))
    return [n for n in names if n]


def equality_name(model: mujoco.MjModel, eq_id: int) -> str:
    """The equality's name, or ``"#<id>"`` when it has none."""
    return mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_EQUALITY, eq_id) or f"#{eq_id}"


def equality_names(model: mujoco.MjModel) -> list[str]:
    """Every equality's API name, in id order."""
    return [equality_name(model, i) for i in range(model.neq)]


def joint_type(model: mujoco.MjModel, joint_id: int) -> str:
    """``"free" | "ball" | "slide" | "hinge"``."""
    return JOINT_TYPES[int(model.jnt_type[joint_id])]


def keyframe_names(model: mujoco.MjModel) -> list[str]:
    """Names of the named keyframes."""
    return named(model, mujoco.mjtObj.mjOBJ_KEY, model.nkey)


def is_floating_base(model: mujoco.MjModel) -> bool:
    """Whether the model has a free joint."""
    return any(int(t) == int(mujoco.mjtJoint.mjJNT_FREE) for t in model.jnt_type)


_PREFERRED_KEYFRAMES = ("home", "stand", "neutral", "default", "init", "ready", "rest")


def default_keyframe(model: mujoco.MjModel) -> str | None:
    """The keyframe a new session starts from: a conventional name, else the first one.

    Conventional names are tried in order (``home``, ``stand``, ``neutral…``, ``default``,
    ``init…``, ``ready``, ``rest``); ``None`` when the model has no named keyframe, in
    which case sessions start at ``qpos0``.
    """
    names = keyframe_names(model)
    for prefix in _PREFERRED_KEYFRAMES:
        for name in names:
            if name.lower().startswith(prefix):
                return name
    return names[0] if names else None
