"""Model utilities: free-joint dimensions, id helpers, keyframe-based vectors, mocap.

The body helpers take a body id (or name) and raise :class:`InvalidFrame` for one that
does not exist.
"""

from __future__ import annotations

import mujoco
import numpy as np

from posekit.ik.exceptions import InvalidConfigurationVector, InvalidJoint, InvalidMocapBody
from posekit.ik.frames import FRAME_TO_POS_ATTR, FRAME_TO_XMAT_ATTR, resolve_frame_id
from posekit.ik.joints import QPOS_WIDTH
from posekit.ik.keyframes import keyframe_q


def get_freejoint_dims(model: mujoco.MjModel) -> tuple[list[int], list[int]]:
    """Indices of free-joint coordinates in ``qpos`` (7 each) and ``qvel`` (6 each)."""
    q_ids: list[int] = []
    v_ids: list[int] = []
    for j in range(model.njnt):
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            q_adr, v_adr = int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j])
            q_ids.extend(range(q_adr, q_adr + 7))
            v_ids.extend(range(v_adr, v_adr + 6))
    return q_ids, v_ids


def get_subtree_body_ids(model: mujoco.MjModel, body_id: int | str) -> list[int]:
    """Ids of ``body_id`` and every body below it in the kinematic tree."""
    body_id = resolve_frame_id(model, body_id, "body")
    parents = model.body_parentid
    subtree = {body_id}
    for b in range(body_id + 1, model.nbody):  # MuJoCo orders bodies parents-first
        if parents[b] in subtree:
            subtree.add(b)
    return sorted(subtree)


def get_body_body_ids(model: mujoco.MjModel, body_id: int | str) -> list[int]:
    """Ids of the immediate children of a body (the body itself excluded)."""
    body_id = resolve_frame_id(model, body_id, "body")
    return [b for b in range(1, model.nbody) if b != body_id and model.body_parentid[b] == body_id]


def get_body_geom_ids(model: mujoco.MjModel, body_id: int | str) -> list[int]:
    """Ids of the geoms attached directly to a body."""
    body_id = resolve_frame_id(model, body_id, "body")
    start, count = int(model.body_geomadr[body_id]), int(model.body_geomnum[body_id])
    return list(range(start, start + count)) if start >= 0 else []


def get_body_joint_ids(model: mujoco.MjModel, body_id: int | str) -> list[int]:
    """Ids of the joints attached directly to a body."""
    body_id = resolve_frame_id(model, body_id, "body")
    start, count = int(model.body_jntadr[body_id]), int(model.body_jntnum[body_id])
    return list(range(start, start + count)) if start >= 0 else []


def get_subtree_geom_ids(model: mujoco.MjModel, body_id: int | str) -> list[int]:
    """Ids of the geoms of a body and of all its descendants."""
    return [g for b in get_subtree_body_ids(model, body_id) for g in get_body_geom_ids(model, b)]


def get_subtree_joint_ids(model: mujoco.MjModel, body_id: int | str) -> list[int]:
    """Ids of the joints of a body and of all its descendants."""
    return [j for b in get_subtree_body_ids(model, body_id) for j in get_body_joint_ids(model, b)]


def custom_configuration_vector(
    model: mujoco.MjModel, key_name: str | None = None, **kwargs: object
) -> np.ndarray:
    """A configuration vector with named joints set to given values.

    Starts from the keyframe ``key_name`` (or ``qpos0``) and sets each joint named in
    ``kwargs`` to its value: a scalar for hinge and slide joints, 4 numbers (wxyz) for
    ball joints, 7 (xyz, wxyz) for free joints.

    Raises:
        InvalidKeyframe: ``key_name`` does not exist.
        InvalidJoint: a joint name does not exist (also a ``KeyError``, as upstream).
        InvalidConfigurationVector: a value of the wrong size or not finite (also a
            ``ValueError``, as upstream).
    """
    if key_name is None:
        q = model.qpos0.copy()
    else:
        q = keyframe_q(model, key_name)
    for name, value in kwargs.items():
        joint_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
        if joint_id < 0:
            raise InvalidJoint(name, model)
        size = QPOS_WIDTH[int(model.jnt_type[joint_id])]
        try:
            array = np.atleast_1d(np.asarray(value, dtype=np.float64))
        except (TypeError, ValueError):
            raise InvalidConfigurationVector(
                f"Joint {name} should have a qpos value of {(size,)} but got {value!r} "
                "(not numeric)"
            ) from None
        if array.shape != (size,):
            raise InvalidConfigurationVector(
                f"Joint {name} should have a qpos value of {(size,)} but got {array.shape}"
            )
        if not np.all(np.isfinite(array)):
            raise InvalidConfigurationVector(
                f"Joint {name} should have a finite qpos value, got {array.tolist()}"
            )
        adr = int(model.jnt_qposadr[joint_id])
        q[adr : adr + size] = array
    return q


def move_mocap_to_frame(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    mocap_name: str,
    frame_name: str | int,
    frame_type: str,
) -> None:
    """Place a mocap body at the current pose of a frame (``data`` must be up to date)."""
    body_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, mocap_name)
    mocap_id = model.body_mocapid[body_id] if body_id >= 0 else -1
    if mocap_id < 0:
        raise InvalidMocapBody(mocap_name, model)
    frame_id = resolve_frame_id(model, frame_name, frame_type)
    data.mocap_pos[mocap_id] = getattr(data, FRAME_TO_POS_ATTR[frame_type])[frame_id]
    mujoco.mju_mat2Quat(
        data.mocap_quat[mocap_id], getattr(data, FRAME_TO_XMAT_ATTR[frame_type])[frame_id]
    )
