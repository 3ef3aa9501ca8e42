r"""Velocity limits: bound joint speeds, :math:`|\Delta q_i| \le v_{\max,i}\,\Delta t`."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

import mujoco
import numpy as np

from posekit.ik.exceptions import InvalidJoint, LimitDefinitionError
from posekit.ik.limits.limit import Bounds, Constraint, Limit, bounds_as_rows

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration

_DOFS = {
    int(mujoco.mjtJoint.mjJNT_HINGE): 1,
    int(mujoco.mjtJoint.mjJNT_SLIDE): 1,
    int(mujoco.mjtJoint.mjJNT_BALL): 3,
}
_NO_VELOCITIES: Mapping[str, object] = MappingProxyType({})


def speeds(value: object, size: int, what: str) -> np.ndarray:
    """``value`` as a float array; a scalar or a single value is broadcast to ``(size,)``.

    Raises :class:`LimitDefinitionError` when it is not numeric; the shape is the
    caller's to check (its message names the thing).
    """
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise LimitDefinitionError(f"{what} must be numeric, got {value!r}") from None
    if array.ndim == 0 or array.shape == (1,):
        return np.full(size, float(array.reshape(-1)[0]))
    return array


def check_positive(array: np.ndarray, what: str) -> np.ndarray:
    """``array`` when every entry is finite and > 0, else :class:`LimitDefinitionError`."""
    if not np.all(np.isfinite(array)) or np.any(array <= 0.0):
        raise LimitDefinitionError(f"{what} must be finite and > 0, got {array.tolist()}")
    array.setflags(write=False)
    return array


_NO_ROWS = Constraint()


class BoxVelocityLimit(Limit):
    r"""Per-coordinate bounds :math:`-v_{\max} \Delta t \le \Delta q_i \le v_{\max} \Delta t`.

    Attributes:
        indices: Limited DoFs, shape ``(k,)``.
        limit: Their maximum speeds, shape ``(k,)``.
        projection_matrix: Rows of the identity at ``indices``, shape ``(k, nv)``, or
            ``None`` when nothing is limited.
    """

    def __init__(self, model: mujoco.MjModel, indices: np.ndarray, limit: np.ndarray) -> None:
        self.model = model
        self.indices = indices.astype(int)
        self.indices.setflags(write=False)
        self.limit = limit
        self.projection_matrix = np.eye(model.nv)[self.indices] if self.indices.size else None
        self._cached: tuple[float, Bounds] | None = None

    def compute_qp_bounds_and_rows(
        self, configuration: Configuration, dt: float
    ) -> tuple[Bounds | None, Constraint]:
        """The limit as simple bounds over the velocity coordinates (cached per ``dt``)."""
        if self.projection_matrix is None:
            return None, _NO_ROWS
        cached = self._cached
        if cached is None or cached[0] != dt:
            upper = np.full(self.model.nv, np.inf)
            upper[self.indices] = self.limit * dt
            cached = self._cached = (dt, Bounds(-upper, upper))
        return cached[1], _NO_ROWS

    def compute_qp_inequalities(self, configuration: Configuration, dt: float) -> Constraint:
        r"""Rows :math:`[P; -P] \Delta q \le [v_{\max} \Delta t; v_{\max} \Delta t]`."""
        bounds, _ = self.compute_qp_bounds_and_rows(configuration, dt)
        return bounds_as_rows(bounds) if bounds is not None else Constraint()


class VelocityLimit(BoxVelocityLimit):
    """Maximum speeds of named hinge, slide and ball joints.

    Args:
        model: The robot model.
        velocities: Joint name → maximum speed, in [rad/s] or [m/s]; a ball joint takes
            three values (one per angular velocity axis) or one for all three. Free
            joints belong to :class:`FreeJointVelocityLimit`.

    Raises:
        InvalidJoint: a joint name does not exist (also a ``KeyError``, as upstream).
        LimitDefinitionError: a free joint, or a speed of the wrong shape, not finite
            or not positive.
    """

    def __init__(
        self, model: mujoco.MjModel, velocities: Mapping[str, object] = _NO_VELOCITIES
    ) -> None:
        indices: list[int] = []
        limits: list[np.ndarray] = []
        for name, value in (velocities or {}).items():
            joint_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
            if joint_id < 0:
                raise InvalidJoint(name, model)
            joint_type = int(model.jnt_type[joint_id])
            if joint_type not in _DOFS:
                raise LimitDefinitionError(
                    f"Free joint {name} is not supported; use FreeJointVelocityLimit for it"
                )
            size = _DOFS[joint_type]
            array = speeds(value, size, f"Joint {name} limit")
            if array.shape != (size,):
                raise LimitDefinitionError(
                    f"Joint {name} must have a limit of shape ({size},). Got: {array.shape}"
                )
            limits.append(check_positive(array, f"Joint {name} limit"))
            dof_adr = int(model.jnt_dofadr[joint_id])
            indices.extend(range(dof_adr, dof_adr + size))
        limit = np.concatenate(limits) if limits else np.zeros(0)
        limit.setflags(write=False)
        super().__init__(model, np.array(indices, dtype=int), limit)
