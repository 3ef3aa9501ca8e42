r"""Velocity limits: bound joint speeds, :math:`|\Delta q_i| \le v_{\max,i}\,\Delta t`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import mujoco
import numpy as np

from posekit.ik.exceptions import LimitDefinitionError
from posekit.ik.limits.limit import Bounds, Constraint, Limit, bounds_as_rows

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration

_DOFS = {
    int(mujoco.mjtJoint.mjJNT_HINGE): 1,
    int(mujoco.mjtJoint.mjJNT_SLIDE): 1,
    int(mujoco.mjtJoint.mjJNT_BALL): 3,
}


def positive_speeds(value: object, size: int, what: str) -> np.ndarray:
    """Finite, strictly positive speeds: a scalar broadcast to ``size``, or ``(size,)``."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise LimitDefinitionError(f"{what} must be numeric, got {value!r}") from None
    if array.ndim == 0 or array.shape == (1,):
        array = np.full(size, float(array.reshape(-1)[0]))
    if array.shape != (size,):
        raise LimitDefinitionError(f"{what} must be a scalar or shape ({size},), got {array.shape}")
    if not np.all(np.isfinite(array)) or np.any(array <= 0.0):
        raise LimitDefinitionError(f"{what} must be finite and > 0, got {array.tolist()}")
    return array


_NO_ROWS = Constraint()


class BoxVelocityLimit(Limit):
    r"""Per-coordinate bounds :math:`-v_{\max} \Delta t \le \Delta q_i \le v_{\max} \Delta t`."""

    def __init__(self, model: mujoco.MjModel, indices: np.ndarray, limit: np.ndarray) -> None:
        self.model = model
        self.indices = indices.astype(int)
        self.limit = limit
        self.projection_matrix = np.eye(model.nv)[self.indices]
        self._cached: tuple[float, Bounds] | None = None

    def compute_qp_bounds_and_rows(
        self, configuration: Configuration, dt: float
    ) -> tuple[Bounds | None, Constraint]:
        """The limit as simple bounds over the velocity coordinates (cached per ``dt``)."""
        cached = self._cached
        if cached is None or cached[0] != dt:
            upper = np.full(self.model.nv, np.inf)
            upper[self.indices] = self.limit * dt
            cached = self._cached = (dt, Bounds(-upper, upper))
        return cached[1], _NO_ROWS

    def compute_qp_inequalities(self, configuration: Configuration, dt: float) -> Constraint:
        r"""Rows :math:`[P; -P] \Delta q \le [v_{\max} \Delta t; v_{\max} \Delta t]`."""
        if self.indices.size == 0:
            return Constraint()
        bounds, _ = self.compute_qp_bounds_and_rows(configuration, dt)
        return bounds_as_rows(bounds) if bounds is not None else Constraint()


class VelocityLimit(BoxVelocityLimit):
    """Maximum speeds of named hinge, slide and ball joints.

    Args:
        model: The robot model.
        velocities: Joint name → maximum speed, in [rad/s] or [m/s]; a ball joint takes
            a scalar or three values (one per angular velocity axis). Free joints belong
            to :class:`FreeJointVelocityLimit`.
    """

    def __init__(
        self, model: mujoco.MjModel, velocities: Mapping[str, object] | None = None
    ) -> None:
        indices: list[int] = []
        limits: list[np.ndarray] = []
        for name, value in (velocities or {}).items():
            joint_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
            if joint_id < 0:
                valid = [model.joint(j).name for j in range(model.njnt)][:12]
                raise LimitDefinitionError(f"joint {name!r} does not exist; joints are {valid}")
            joint_type = int(model.jnt_type[joint_id])
            if joint_type not in _DOFS:
                raise LimitDefinitionError(
                    f"joint {name!r} is a free joint; use FreeJointVelocityLimit for it"
                )
            size = _DOFS[joint_type]
            dof_adr = int(model.jnt_dofadr[joint_id])
            indices.extend(range(dof_adr, dof_adr + size))
            limits.append(positive_speeds(value, size, f"velocity of joint {name!r}"))
        super().__init__(
            model,
            np.array(indices, dtype=int),
            np.concatenate(limits) if limits else np.zeros(0),
        )
