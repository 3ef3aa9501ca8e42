r"""Configuration limit: keep every limited joint within its range."""

from __future__ import annotations

from typing import TYPE_CHECKING

import mujoco
import numpy as np

from posekit.ik.exceptions import LimitDefinitionError
from posekit.ik.limits.limit import Bounds, Constraint, Limit, bounds_as_rows

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration


_NO_ROWS = Constraint()


class ConfigurationLimit(Limit):
    r"""Inequalities that keep :math:`q \oplus \Delta q` within the joint ranges.

    For a limited hinge or slide coordinate with range :math:`[q_{\min}, q_{\max}]`
    shrunk by ``min_distance_from_limits`` :math:`d`, the step is bounded by

    .. math:: \gamma\,(q_{\min} + d - q) \le \Delta q_i \le \gamma\,(q_{\max} - d - q),

    with gain :math:`\gamma \in (0, 1]` (rows :math:`[P; -P]` in the inequality form).
    A limited ball joint whose rotation has angle :math:`\theta` about the unit axis
    :math:`n` gets one row :math:`n^T \Delta\omega \le \gamma(\theta_{\max} - d - \theta)`,
    the first-order change of its angle. Free joints are not limited.
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        gain: float = 0.95,
        min_distance_from_limits: float = 0.0,
    ) -> None:
        if not 0.0 < gain <= 1.0:
            raise LimitDefinitionError(f"gain must be in (0, 1], got {gain!r}")
        if not np.isfinite(min_distance_from_limits) or min_distance_from_limits < 0.0:
            raise LimitDefinitionError(
                f"min_distance_from_limits must be >= 0, got {min_distance_from_limits!r}"
            )
        self.model = model
        self.gain = float(gain)
        self.min_distance_from_limits = float(min_distance_from_limits)
        scalar_types = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
        joints = [
            j
            for j in range(model.njnt)
            if model.jnt_limited[j] and int(model.jnt_type[j]) in scalar_types
        ]
        self.indices = np.array([model.jnt_dofadr[j] for j in joints], dtype=int)
        self._qpos_adr = np.array([model.jnt_qposadr[j] for j in joints], dtype=int)
        self.lower = model.jnt_range[joints, 0] + self.min_distance_from_limits
        self.upper = model.jnt_range[joints, 1] - self.min_distance_from_limits
        self.projection_matrix = np.eye(model.nv)[self.indices]
        # Per-DoF views: the limited coordinates' qpos address and range, ±inf elsewhere.
        self._dof_qpos_adr = np.zeros(model.nv, dtype=int)
        self._dof_qpos_adr[self.indices] = self._qpos_adr
        self._dof_upper = np.full(model.nv, np.inf)
        self._dof_lower = np.full(model.nv, -np.inf)
        self._dof_upper[self.indices] = self.upper
        self._dof_lower[self.indices] = self.lower
        self._balls = [
            (int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j]), float(model.jnt_range[j, 1]))
            for j in range(model.njnt)
            if model.jnt_limited[j] and model.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL
        ]

    def compute_qp_bounds_and_rows(
        self, configuration: Configuration, dt: float
    ) -> tuple[Bounds | None, Constraint]:
        """Hinge and slide limits as simple bounds; ball-joint limits as rows."""
        qpos = configuration.data.qpos
        values = qpos.take(self._dof_qpos_adr)
        upper = self._dof_upper - values
        upper *= self.gain
        lower = self._dof_lower - values
        lower *= self.gain
        return Bounds(lower, upper), self._ball_rows(qpos) if self._balls else _NO_ROWS

    def _ball_rows(self, qpos: np.ndarray) -> Constraint:
        rows, bounds = [], []
        for qpos_adr, dof_adr, max_angle in self._balls:
            quat = qpos[qpos_adr : qpos_adr + 4]
            sine = float(np.linalg.norm(quat[1:]))
            if sine < 1e-9:
                continue  # identity rotation: the angle's gradient is undefined, and far from the limit
            angle = 2.0 * float(np.arctan2(sine, abs(quat[0])))
            axis = quat[1:] / sine * np.sign(quat[0] or 1.0)
            row = np.zeros(self.model.nv)
            row[dof_adr : dof_adr + 3] = axis
            rows.append(row)
            bounds.append(self.gain * (max_angle - self.min_distance_from_limits - angle))
        if not rows:
            return Constraint()
        return Constraint(np.array(rows), np.array(bounds))

    def compute_qp_inequalities(self, configuration: Configuration, dt: float) -> Constraint:
        r"""All rows: :math:`[P; -P] \Delta q \le \gamma [q_{\max} - q; q - q_{\min}]`, then balls."""
        bounds, ball_rows = self.compute_qp_bounds_and_rows(configuration, dt)
        box = bounds_as_rows(bounds) if bounds is not None else Constraint()
        if ball_rows.G is None or ball_rows.h is None:
            return box
        if box.G is None or box.h is None:
            return ball_rows
        return Constraint(np.vstack((box.G, ball_rows.G)), np.concatenate((box.h, ball_rows.h)))
