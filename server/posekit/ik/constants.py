"""Model-level constants: frame types and the widths of joints and equality constraints.

Frames are ``"body"``, ``"geom"`` or ``"site"``; the tables map a frame type to its
MuJoCo object type, its Jacobian function, the ``MjData`` fields holding its world
position and rotation matrix, and the ``MjModel`` field counting frames of that type.
"""

from __future__ import annotations

import mujoco

from posekit.ik.joints import DOF_WIDTH, QPOS_WIDTH

SUPPORTED_FRAMES: tuple[str, ...] = ("body", "geom", "site")

FRAME_TO_ENUM: dict[str, mujoco.mjtObj] = {
    "body": mujoco.mjtObj.mjOBJ_BODY,
    "geom": mujoco.mjtObj.mjOBJ_GEOM,
    "site": mujoco.mjtObj.mjOBJ_SITE,
}
FRAME_TO_JAC_FUNC = {
    "body": mujoco.mj_jacBody,
    "geom": mujoco.mj_jacGeom,
    "site": mujoco.mj_jacSite,
}
FRAME_TO_POS_ATTR: dict[str, str] = {"body": "xpos", "geom": "geom_xpos", "site": "site_xpos"}
FRAME_TO_XMAT_ATTR: dict[str, str] = {"body": "xmat", "geom": "geom_xmat", "site": "site_xmat"}
FRAME_TO_COUNT_ATTR: dict[str, str] = {"body": "nbody", "geom": "ngeom", "site": "nsite"}

_CONSTRAINT_WIDTH: dict[int, int] = {
    int(mujoco.mjtEq.mjEQ_CONNECT): 3,  # a point coincides with another
    int(mujoco.mjtEq.mjEQ_WELD): 6,  # a pose coincides with another
    int(mujoco.mjtEq.mjEQ_JOINT): 1,
    int(mujoco.mjtEq.mjEQ_TENDON): 1,
}


def dof_width(joint_type: int) -> int:
    """Degrees of freedom (entries of ``qvel``) of a joint type (``mjtJoint``)."""
    return DOF_WIDTH[int(joint_type)]


def qpos_width(joint_type: int) -> int:
    """Coordinates (entries of ``qpos``) of a joint type (``mjtJoint``)."""
    return QPOS_WIDTH[int(joint_type)]


def constraint_width(constraint: int) -> int:
    """Rows (entries of the ``efc_*`` arrays) of an equality constraint type (``mjtEq``)."""
    return _CONSTRAINT_WIDTH[int(constraint)]
