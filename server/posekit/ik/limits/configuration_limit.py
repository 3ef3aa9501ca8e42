r"""Configuration limit: keep every limited joint within its range.

Two kinds of inequality on the step :math:`\Delta q` (with gain :math:`\gamma \in (0, 1]`,
the fraction of the remaining distance to a limit one step may cover):

**Hinge and slide joints** (one coordinate each) are box-limited: with the coordinate
:math:`q_a` at ``qpos`` address :math:`a`, its degree of freedom :math:`i` and the range
:math:`[l_a, u_a]` (``jnt_range`` shrunk by ``min_distance_from_limits``),

.. math:: \gamma\,(l_a - q_a) \;\le\; \Delta q_i \;\le\; \gamma\,(u_a - q_a),

which :func:`joint_box_bounds` returns as simple bounds and
:meth:`ConfigurationLimit.compute_qp_inequalities` as the rows
:math:`[P; -P]\,\Delta q \le \gamma\,[u - q;\; q - l]` of upstream.

**Ball joints** limit the rotation angle :math:`\theta` of the joint's quaternion
:math:`r = (w, v)` to :math:`\theta_{\max}` (``jnt_range[1]`` minus
``min_distance_from_limits``; MuJoCo ignores ``jnt_range[0]`` of a ball joint). The
joint's log map is :math:`\phi = \log r = \theta\,n` with
:math:`\theta = 2\,\mathrm{atan2}(\|v\|, |w|) \in [0, \pi]` and unit axis
:math:`n = \mathrm{sign}(w)\, v / \|v\|`. MuJoCo integrates the joint's three DoFs
:math:`\Delta\omega` (angular velocity in the child frame) as
:math:`r \mapsto r \otimes \exp(\Delta\omega)`, so to first order
:math:`\log(r \exp \Delta\omega) = \phi + J_r^{-1}(\phi)\,\Delta\omega` with
:math:`J_r^{-1}(\phi) = I + \tfrac12 [\phi]_\times + c(\theta)\,[\phi]_\times^2`. Since
:math:`n^T [\phi]_\times = (\phi \times n)^T = 0`, the angle changes by

.. math:: \Delta\theta = n^T J_r^{-1}(\phi)\,\Delta\omega = n^T \Delta\omega,

and the limit :math:`\theta + \Delta\theta \le \theta_{\max}`, approached geometrically,
is **one row** per limited ball joint (:func:`ball_limit_rows`):

.. math:: n^T \Delta\omega \;\le\; \gamma\,(\theta_{\max} - \theta).

At the identity (:math:`\theta \le 10^{-9}`) the angle is not differentiable (it grows
as :math:`\|\Delta\omega\|` in every direction) and the axis is undefined: the row is
zero and :math:`h = \gamma\,\theta_{\max} > 0`, so the row is always satisfied. The
row is first order: motion orthogonal to :math:`n` grows the angle at second order, so
pair the limit with a velocity limit on the ball's DoFs for large steps. Free joints
are never limited.
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import mujoco
import numpy as np

from posekit.ik.exceptions import LimitDefinitionError
from posekit.ik.limits.limit import Bounds, Constraint, Limit

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration

_IDENTITY_ANGLE = 1e-9  # [rad]: below this a ball joint's rotation axis is undefined
_NO_ROWS = Constraint()
_SCALAR_JOINTS = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))


def joint_box_bounds(
    q: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    qpos_of_dof: np.ndarray | None,
    gain: float,
) -> Bounds:
    r"""Simple bounds :math:`\gamma(l_a - q_a) \le \Delta q_i \le \gamma(u_a - q_a)` per DoF.

    Args:
        q: Configuration, shape ``(nq,)``.
        lower, upper: Shape ``(nq + 1,)``: the limits :math:`l, u` of each ``qpos``
            coordinate, then a last entry :math:`-\infty` / :math:`+\infty` that stands
            for "no limit".
        qpos_of_dof: Shape ``(nv,)``: for each DoF, the ``qpos`` address :math:`a` of its
            limited coordinate, or ``nq`` (the "no limit" entry) for a DoF without one;
            ``None`` when every DoF is limited at its own address (:math:`a = i`, no free
            or ball joints), which needs no gather.
        gain: :math:`\gamma`.

    Returns:
        Bounds of shape ``(nv,)``, :math:`\pm\infty` for the DoFs without a limit.
    """
    if qpos_of_dof is None:
        upper_step = upper[:-1] - q
        lower_step = lower[:-1] - q
    else:
        values = q.take(qpos_of_dof, mode="clip")  # entry nq: any value, the limit is inf
        upper_step = upper.take(qpos_of_dof)
        upper_step -= values
        lower_step = lower.take(qpos_of_dof)
        lower_step -= values
    upper_step *= gain
    lower_step *= gain
    return Bounds(lower_step, upper_step)


def ball_limit_rows(
    q: np.ndarray,
    qpos_adr: np.ndarray,
    dof_adr: np.ndarray,
    max_angle: np.ndarray,
    gain: float,
    nv: int,
) -> Constraint:
    r"""Rows :math:`n^T \Delta\omega \le \gamma(\theta_{\max} - \theta)`, one per ball joint.

    Args:
        q: Configuration, shape ``(nq,)``.
        qpos_adr: ``qpos`` address of each limited ball joint's quaternion ``wxyz``.
        dof_adr: Address of each joint's first DoF.
        max_angle: :math:`\theta_{\max}` of each joint [rad].
        gain: :math:`\gamma`.
        nv: Number of DoFs (columns of ``G``).

    Returns:
        ``G`` of shape ``(len(qpos_adr), nv)`` and ``h`` [rad] (module docstring: a zero
        row at the identity).
    """
    count = len(qpos_adr)
    G = np.zeros((count, nv))
    h = np.empty(count)
    for row in range(count):
        adr, dof = int(qpos_adr[row]), int(dof_adr[row])
        w, x, y, z = q[adr : adr + 4].tolist()
        sine = math.sqrt(x * x + y * y + z * z)  # |v| = |sin(θ/2)| for a unit quaternion
        angle = 2.0 * math.atan2(sine, abs(w))
        if angle > _IDENTITY_ANGLE:
            scale = (-1.0 if w < 0.0 else 1.0) / sine
            G[row, dof : dof + 3] = (scale * x, scale * y, scale * z)
        h[row] = gain * (float(max_angle[row]) - angle)
    return Constraint(G, h)


class ConfigurationLimit(Limit):
    r"""Keep :math:`q \oplus \Delta q` within the joint ranges (module docstring).

    Args:
        model: MuJoCo model.
        gain: :math:`\gamma \in (0, 1]`, the fraction of the distance to a limit one step
            may cover.
        min_distance_from_limits: Margin in [m] (slide) or [rad] (hinge, ball) taken off
            each range; negative values widen the ranges.

    Attributes:
        indices: DoFs of the limited hinge and slide joints, shape ``(k,)``.
        projection_matrix: Rows of the identity at ``indices``, shape ``(k, nv)``, or
            ``None`` when no hinge or slide joint is limited.
        lower, upper: Limits per ``qpos`` coordinate, shape ``(nq,)``, padded with
            :math:`\mp` ``mujoco.mjMAXVAL`` where a coordinate is not box-limited (free
            and ball joints, unlimited hinges and slides). Writing into them (or
            assigning new arrays) after construction changes the limits of the joints in
            ``indices``.

    Raises:
        LimitDefinitionError: ``gain`` outside (0, 1], a non-finite margin, or a margin
            that leaves a limited ball joint no positive angle.
    """

    model: mujoco.MjModel
    gain: float
    indices: np.ndarray
    projection_matrix: np.ndarray | None

    def __init__(
        self,
        model: mujoco.MjModel,
        gain: float = 0.95,
        min_distance_from_limits: float = 0.0,
    ) -> None:
        if not 0.0 < gain <= 1.0:
            raise LimitDefinitionError(
                f"{type(self).__name__} gain must be in the range (0, 1], got {gain!r}"
            )
        margin = min_distance_from_limits
        if isinstance(margin, bool) or not isinstance(margin, numbers.Real):
            raise LimitDefinitionError(f"min_distance_from_limits must be a number, got {margin!r}")
        if not math.isfinite(margin):
            raise LimitDefinitionError(f"min_distance_from_limits must be finite, got {margin!r}")
        self.model = model
        self.gain = float(gain)
        self.min_distance_from_limits = float(margin)
        limited = [j for j in range(model.njnt) if model.jnt_limited[j]]
        boxed = [j for j in limited if int(model.jnt_type[j]) in _SCALAR_JOINTS]
        balls = [j for j in limited if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL]

        self.indices = np.array([model.jnt_dofadr[j] for j in boxed], dtype=int)
        self.indices.setflags(write=False)
        self.projection_matrix = np.eye(model.nv)[self.indices] if boxed else None
        # lower and upper per qpos coordinate, then the "no limit" entry (-inf, +inf).
        self._lower: np.ndarray = np.full(model.nq + 1, -np.inf)
        self._upper: np.ndarray = np.full(model.nq + 1, np.inf)
        self.lower = np.full(model.nq, -mujoco.mjMAXVAL)
        self.upper = np.full(model.nq, mujoco.mjMAXVAL)
        qpos_adr = model.jnt_qposadr[boxed]
        self.lower[qpos_adr] = model.jnt_range[boxed, 0] + self.min_distance_from_limits
        self.upper[qpos_adr] = model.jnt_range[boxed, 1] - self.min_distance_from_limits
        qpos_of_dof = np.full(model.nv, model.nq, dtype=np.intp)
        qpos_of_dof[self.indices] = qpos_adr
        identity = model.nq == model.nv and np.array_equal(qpos_of_dof, np.arange(model.nv))
        self._qpos_of_dof: np.ndarray | None = None if identity else qpos_of_dof

        self._boxed: bool = bool(boxed)  # flags read on the hot path
        self._ball_free: bool = not balls
        self._ball_qpos_adr: np.ndarray = model.jnt_qposadr[balls]
        self._ball_dof_adr: np.ndarray = model.jnt_dofadr[balls]
        self._ball_max_angle: np.ndarray = model.jnt_range[balls, 1] - self.min_distance_from_limits
        for joint, max_angle in zip(balls, self._ball_max_angle, strict=True):
            if max_angle <= 0.0:
                raise LimitDefinitionError(
                    f"{type(self).__name__} ball joint max rotation angle must be positive "
                    f"after subtracting min_distance_from_limits: joint "
                    f"'{model.joint(joint).name}' has range {float(model.jnt_range[joint, 1])} rad "
                    f"and min_distance_from_limits is {self.min_distance_from_limits!r}"
                )

    # The limits live in (nq + 1,) buffers read by joint_box_bounds; ``lower`` and
    # ``upper`` are views of them, so writes into them are seen by the next step.
    @property
    def lower(self) -> np.ndarray:
        """Lower limit per ``qpos`` coordinate, shape ``(nq,)`` (a writable view)."""
        return self._lower[:-1]

    @lower.setter
    def lower(self, value: np.ndarray) -> None:
        self._lower[:-1] = value

    @property
    def upper(self) -> np.ndarray:
        """Upper limit per ``qpos`` coordinate, shape ``(nq,)`` (a writable view)."""
        return self._upper[:-1]

    @upper.setter
    def upper(self, value: np.ndarray) -> None:
        self._upper[:-1] = value

    def box_limits(self) -> tuple[np.ndarray | None, np.ndarray, np.ndarray] | None:
        """What the simple bounds are computed from, or ``None`` when no joint is boxed.

        ``(qpos_of_dof, lower, upper)`` as :func:`joint_box_bounds` takes them: the
        limit's own ``(nq + 1,)`` buffers (written in place through :attr:`lower` and
        :attr:`upper`), and the ``qpos`` address of each DoF's limit (``None``: the
        identity).
        """
        if not self._boxed:
            return None
        return self._qpos_of_dof, self._lower, self._upper

    def ball_joints(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The limited ball joints' ``qpos`` and DoF addresses and maximum angles [rad]."""
        return self._ball_qpos_adr, self._ball_dof_adr, self._ball_max_angle

    def _ball_rows(self, q: np.ndarray) -> Constraint:
        return ball_limit_rows(
            q, self._ball_qpos_adr, self._ball_dof_adr, self._ball_max_angle, self.gain,
            self.model.nv,
        )  # fmt: skip

    def compute_qp_bounds_and_rows(
        self, configuration: Configuration, dt: float
    ) -> tuple[Bounds | None, Constraint]:
        """Hinge and slide limits as simple bounds; ball-joint limits as rows."""
        q = configuration.data.qpos
        bounds = (
            joint_box_bounds(q, self._lower, self._upper, self._qpos_of_dof, self.gain)
            if self._boxed
            else None
        )
        return bounds, _NO_ROWS if self._ball_free else self._ball_rows(q)

    def compute_qp_inequalities(self, configuration: Configuration, dt: float) -> Constraint:
        r"""Rows :math:`[P; -P; B]\,\Delta q \le [\gamma(u - q);\ \gamma(q - l);\ h_B]`.

        :math:`P` is :attr:`projection_matrix` and :math:`(B, h_B)` the ball-joint rows;
        inactive when nothing is limited. ``dt`` is unused: the bounds are positions.
        """
        bounds, balls = self.compute_qp_bounds_and_rows(configuration, dt)
        G_blocks: list[np.ndarray] = []
        h_blocks: list[np.ndarray] = []
        if bounds is not None and self.projection_matrix is not None:
            G_blocks += [self.projection_matrix, -self.projection_matrix]
            h_blocks += [bounds.upper[self.indices], -bounds.lower[self.indices]]
        if balls.G is not None and balls.h is not None:
            G_blocks.append(balls.G)
            h_blocks.append(balls.h)
        if not G_blocks:
            return Constraint()
        return Constraint(np.vstack(G_blocks), np.concatenate(h_blocks))
