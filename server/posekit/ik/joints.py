"""Widths of MuJoCo joints: coordinates in ``qpos`` and degrees of freedom in ``qvel``."""

from __future__ import annotations

import mujoco

QPOS_WIDTH: dict[int, int] = {
    int(mujoco.mjtJoint.mjJNT_FREE): 7,  # position (3) + unit quaternion (4)
    int(mujoco.mjtJoint.mjJNT_BALL): 4,  # unit quaternion
    int(mujoco.mjtJoint.mjJNT_SLIDE): 1,
    int(mujoco.mjtJoint.mjJNT_HINGE): 1,
}
"""Coordinates per joint type (keys are ``mjtJoint`` values)."""

DOF_WIDTH: dict[int, int] = {
    int(mujoco.mjtJoint.mjJNT_FREE): 6,  # linear (3) + angular (3) velocity
    int(mujoco.mjtJoint.mjJNT_BALL): 3,
    int(mujoco.mjtJoint.mjJNT_SLIDE): 1,
    int(mujoco.mjtJoint.mjJNT_HINGE): 1,
}
"""Degrees of freedom per joint type (keys are ``mjtJoint`` values)."""
