"""Checking a configuration vector given by a client."""

from __future__ import annotations

import mujoco
import numpy as np

from posekit.ik.configuration import as_vector
from posekit.sessions.errors import InvalidRequest


def check_q(model: mujoco.MjModel, q: object) -> np.ndarray:
    """A copy of ``q`` of size nq with finite values and unit quaternions.

    Quaternions of free and ball joints are normalised; a zero quaternion is an error.
    """
    vector = as_vector(q, model.nq, "q").copy()
    for j in range(model.njnt):
        kind = int(model.jnt_type[j])
        if kind == mujoco.mjtJoint.mjJNT_FREE:
            adr = int(model.jnt_qposadr[j]) + 3
        elif kind == mujoco.mjtJoint.mjJNT_BALL:
            adr = int(model.jnt_qposadr[j])
        else:
            continue
        norm = float(np.linalg.norm(vector[adr : adr + 4]))
        if norm < 1e-9:
            name = model.joint(j).name or f"#{j}"
            raise InvalidRequest(
                f"q has a zero quaternion for joint {name!r} at q[{adr}:{adr + 4}]"
            )
        vector[adr : adr + 4] /= norm
    return vector
