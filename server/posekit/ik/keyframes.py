"""Keyframes by name: the one place a keyframe name becomes a configuration."""

from __future__ import annotations

import mujoco
import numpy as np

from posekit.ik.exceptions import InvalidKeyframe


def keyframe_q(model: mujoco.MjModel, name: str) -> np.ndarray:
    """A copy of the ``qpos`` (size nq) of the keyframe ``name``.

    Raises:
        InvalidKeyframe: No keyframe has that name (the message lists the valid ones).
    """
    key_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, name)
    if key_id < 0:
        raise InvalidKeyframe(name, model)
    return np.array(model.key_qpos[key_id], dtype=np.float64)
