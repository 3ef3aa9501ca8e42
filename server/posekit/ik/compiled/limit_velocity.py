r"""Compiled velocity limits: joint speeds as simple bounds, a free joint's linear speed as rows.

As :class:`~posekit.ik.limits.VelocityLimit`: :math:`|\Delta q_i| \le v_{\max,i}\,\Delta t`
on the listed DoFs (±∞ elsewhere; no bounds at all without any). As :class:`~posekit.ik.limits.FreeJointVelocityLimit`:
the angular DoFs bounded by :math:`\omega_{\max}\,\Delta t` (when given) and the six rows
:math:`[R^T; -R^T]\,\Delta p \le [v_{\max}; v_{\max}]\,\Delta t` in the base frame
:math:`R` (when given).

Velocity record: the DoF count and addresses of the DoFs (``int32``) and speeds.
Free-joint record: base body, first linear and angular DoF, addresses of the linear
and angular maxima (0 when absent).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from posekit.ik.compiled import header as h
from posekit.ik.compiled.limit_configuration import maximum, minimum
from posekit.ik.compiled.native import floats, int32s
from posekit.ik.compiled.packing import (
    NotCompiled,
    PackContext,
    Packed,
    all_columns,
    vector_address,
)
from posekit.ik.limits import FreeJointVelocityLimit
from posekit.ik.limits.velocity_limit import BoxVelocityLimit

V_COUNT = h.R_FIRST
V_DOFS = h.R_FIRST + 1
V_SPEEDS = h.R_FIRST + 2
J_BODY = h.R_FIRST
J_DOF = h.R_FIRST + 1
J_LINEAR = h.R_FIRST + 2
J_ANGULAR = h.R_FIRST + 3


def pack_velocity(limit: BoxVelocityLimit, context: PackContext) -> Packed:
    """The record of a velocity limit (module docstring)."""
    dofs = np.asarray(limit.indices, dtype=np.int32)
    packed = Packed(h.L_VELOCITY, [], [], 0, all_columns(context.model.nv), [dofs])
    packed.ints = [
        dofs.shape[0],
        int(dofs.ctypes.data),
        vector_address(packed, limit.limit, dofs.shape[0], "VelocityLimit.limit"),
    ]
    return packed


def pack_free_joint(limit: FreeJointVelocityLimit, context: PackContext) -> Packed:
    """The record of a free-joint velocity limit (module docstring)."""
    model = context.model
    joint = model.joint(limit.joint_name).id
    if int(model.jnt_bodyid[joint]) != limit.base_body_id:
        raise NotCompiled("FreeJointVelocityLimit.base_body_id is not its joint's body")
    packed = Packed(h.L_FREE_JOINT_VELOCITY, [], [], 0, all_columns(model.nv))
    linear = angular = 0
    if limit.linear_max is not None:
        linear = vector_address(packed, limit.linear_max, 3, "linear_max")
        packed.rows = 6
    if limit.angular_max is not None:
        angular = vector_address(packed, limit.angular_max, 3, "angular_max")
    packed.ints = [limit.base_body_id, int(model.jnt_dofadr[joint]), linear, angular]
    return packed


@njit(cache=True, nogil=True)
def velocity_bounds(
    ints: np.ndarray,
    scalars: np.ndarray,
    record: int,
    lower: np.ndarray,
    upper: np.ndarray,
    merge: bool,
) -> bool:
    r"""Set (or intersect) ``lower``/``upper`` with :math:`\mp v_{\max} \Delta t`; False without DoFs."""
    dt = scalars[h.F_DT]
    count = ints[record + V_COUNT]
    if count == 0:
        return False
    dofs = int32s(ints[record + V_DOFS], count)
    speeds = floats(ints[record + V_SPEEDS], count)
    if not merge:
        upper[:] = np.inf
        lower[:] = -np.inf
    for k in range(count):
        i = dofs[k]
        bound = speeds[k] * dt
        upper[i] = minimum(upper[i], bound)
        lower[i] = maximum(lower[i], -bound)
    return True


@njit(cache=True, nogil=True)
def free_joint_bounds(
    ints: np.ndarray,
    scalars: np.ndarray,
    record: int,
    lower: np.ndarray,
    upper: np.ndarray,
    merge: bool,
) -> bool:
    r"""Intersect with :math:`|\Delta\theta| \le \omega_{\max}\,\Delta t`; False without it."""
    if ints[record + J_ANGULAR] == 0:
        return False
    angular = floats(ints[record + J_ANGULAR], 3)
    velocity_dof = ints[record + J_DOF] + 3
    if not merge:
        upper[:] = np.inf
        lower[:] = -np.inf
    for k in range(3):
        bound = angular[k] * scalars[h.F_DT]
        upper[velocity_dof + k] = minimum(upper[velocity_dof + k], bound)
        lower[velocity_dof + k] = maximum(lower[velocity_dof + k], -bound)
    return True


@njit(cache=True, nogil=True)
def free_joint_rows(
    ints: np.ndarray, scalars: np.ndarray, record: int, out: np.ndarray, rhs: np.ndarray, first: int
) -> int:
    r"""The rows :math:`\pm R^T` on the linear DoFs from ``first``; returns 6 or 0."""
    if ints[record + J_LINEAR] == 0:
        return 0
    linear = floats(ints[record + J_LINEAR], 3)
    rotation = floats(ints[h.H_XMAT] + 8 * 9 * ints[record + J_BODY], 9)
    dof = ints[record + J_DOF]
    for i in range(3):
        upper_row = out[first + i]
        lower_row = out[first + 3 + i]
        upper_row[:] = 0.0
        lower_row[:] = 0.0
        for j in range(3):
            upper_row[dof + j] = rotation[3 * j + i]
            lower_row[dof + j] = -rotation[3 * j + i]
        bound = linear[i] * scalars[h.F_DT]
        rhs[first + i] = bound
        rhs[first + 3 + i] = bound
    return 6
