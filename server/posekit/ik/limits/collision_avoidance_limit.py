r"""Collision avoidance: keep selected geom pairs at least a minimum distance apart.

For a geom pair with signed distance :math:`d` (negative when penetrating) and nearest
points :math:`p_1` on the first geom and :math:`p_2` on the second, let :math:`n` be the
unit separation direction, pointing from geom 1 towards geom 2. To first order, a
configuration step :math:`\Delta q` changes the distance by

.. math:: \Delta d = n^T \big(J_{p_2}(q) - J_{p_1}(q)\big)\,\Delta q,

with :math:`J_p` the translational Jacobian (``3 × nv``, world frame) of the point
:math:`p` attached to its geom's body. ``mj_geomDistance`` reports the segment
:math:`p_1 \to p_2`: when the geoms are apart, :math:`p_2 - p_1` is along :math:`n`;
when they penetrate it points the other way, so with
:math:`\hat u = (p_2 - p_1) / \lVert p_2 - p_1 \rVert` the separation direction is
:math:`n = -s\,\hat u` with :math:`s = -1` if :math:`d \ge 0` and :math:`s = +1` otherwise.

The constraint lets the distance approach :math:`d_{\min}` only geometrically: the
step may remove at most a fraction :math:`\gamma` (the gain) of the remaining margin,
:math:`-\Delta d \le \gamma\,(d - d_{\min})`. As one row of :math:`G \Delta q \le h`:

.. math::

    s\,\hat u^T \big(J_{p_2} - J_{p_1}\big)\,\Delta q \;\le\;
    \begin{cases} \gamma\,(d - d_{\min}) + r & d > d_{\min} \\ r & \text{otherwise} \end{cases}

with :math:`r` the bound relaxation. **Units**: the QP variable is the displacement
:math:`\Delta q = v\,\Delta t`, so both sides are in meters and the bound does not
depend on :math:`\Delta t` (DESIGN §4 writes :math:`\gamma (d - d_{\min}) / \Delta t`,
which would let a pair at the detection distance close a gap of
:math:`\gamma (d - d_{\min}) / \Delta t` — 0.4 m at 100 Hz — in one step; in displacement
units the distance converges to :math:`d_{\min}` and never crosses it to first order).

``G`` always has one row per pair (:attr:`max_num_contacts`). A pair farther apart than
the collision detection distance gets a zero row and :math:`h = +\infty`. With at least
``broadphase_min_pairs`` pairs, a cheap broadphase skips the exact distance query for
pairs whose bounding spheres (``geom_rbound`` around ``geom_xpos``) are farther apart
than the detection distance; planes (``rbound = 0``, unbounded) always get the exact
query. See :mod:`posekit.ik.limits.broadphase`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import mujoco
import numpy as np

from posekit.ik.exceptions import LimitDefinitionError
from posekit.ik.limits.broadphase import candidate_pairs, pair_reach_squared
from posekit.ik.limits.geom_pairs import GeomPairGroups, expand_geom_pairs
from posekit.ik.limits.limit import Bounds, Constraint, Limit

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration

_BROADPHASE_MIN_PAIRS = 16  # below this, the broadphase call costs more than it saves
_DEGENERATE_SEGMENT = 1e-12  # [m]: nearest points coincide, the segment has no direction

# Upstream's names for what ``geom_pairs`` holds (posekit also takes bodies and bare names).
Geom = int | str
GeomSequence = Sequence[Geom]
CollisionPair = tuple[GeomSequence, GeomSequence]
CollisionPairs = Sequence[CollisionPair]


def compute_contact_normal_jacobian(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    geom1_id: int,
    geom2_id: int,
    fromto: np.ndarray,
    normal: np.ndarray,
    jac1: np.ndarray,
    jac2: np.ndarray,
) -> np.ndarray:
    r"""Row :math:`\hat u^T (J_{p_2} - J_{p_1})` of the segment between two geoms' nearest points.

    Args:
        model: MuJoCo model.
        data: MuJoCo data with kinematics (``mj_kinematics``, ``mj_comPos``) up to date.
        geom1_id, geom2_id: The geoms.
        fromto: Nearest points ``(p1, p2)`` as 6 numbers [m], as ``mj_geomDistance`` writes.
        normal: Output, shape ``(3,)``: :math:`\hat u = (p_2 - p_1)/\lVert p_2 - p_1\rVert`
            (``(1, 0, 0)`` when the points coincide, as ``mju_normalize3``).
        jac1, jac2: Scratch ``(3, nv)``: translational Jacobians of :math:`p_1` (on geom
            1's body) and :math:`p_2` (on geom 2's body); ``jac2`` ends as their difference.

    Returns:
        The row, shape ``(nv,)``: the first-order change of
        :math:`\hat u^T (p_2 - p_1)` per unit of :math:`\Delta q`.
    """
    np.subtract(fromto[3:], fromto[:3], out=normal)
    mujoco.mju_normalize3(normal)
    mujoco.mj_jac(model, data, jac1, None, fromto[:3], int(model.geom_bodyid[geom1_id]))
    mujoco.mj_jac(model, data, jac2, None, fromto[3:], int(model.geom_bodyid[geom2_id]))
    np.subtract(jac2, jac1, out=jac2)
    return normal @ jac2


def _finite(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise LimitDefinitionError(f"{name} must be a finite number (meters), got {value!r}")
    return float(value)


class CollisionAvoidanceLimit(Limit):
    r"""Keep geom pairs at least ``minimum_distance_from_collisions`` apart (module docstring).

    Args:
        model: MuJoCo model.
        geom_pairs: Pair groups ``(A, B)``; each side is a sequence of geom names, geom
            ids or body names (a body name, used when no geom has that name, stands for
            all geoms of the body). Every geom of ``A`` is paired with every geom of ``B``;
            pairs MuJoCo would never collide (same or welded bodies, welded parent/child
            bodies, failing contype/conaffinity) are dropped, duplicates merged.
        gain: Fraction :math:`\gamma \in (0, 1]` of the remaining margin
            :math:`d - d_{\min}` a single step may close.
        minimum_distance_from_collisions: :math:`d_{\min}` in [m]; a negative value
            lets the geoms penetrate by that much.
        collision_detection_distance: Pairs farther apart than this, in [m], are not
            constrained this step; must be at least :math:`d_{\min}` (negative: only
            pairs penetrating deeper than its magnitude are constrained).
        bound_relaxation: Offset :math:`r` in [m] added to every active row's bound.
        broadphase: Skip the exact distance query for pairs that cannot be in range
            (module docstring); the rows are the same either way.

    Attributes:
        geom_id_pairs: The pairs ``(g1, g2)``, ``g1 < g2``, one row each.
        max_num_contacts: Number of pairs, i.e. the height of ``G``.
        broadphase_min_pairs: The broadphase runs when there are at least this many
            pairs (16; 0 always runs it); below, every pair gets the exact query.
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        geom_pairs: GeomPairGroups,
        gain: float = 0.85,
        minimum_distance_from_collisions: float = 0.005,
        collision_detection_distance: float = 0.01,
        bound_relaxation: float = 0.0,
        broadphase: bool = True,
    ) -> None:
        if not isinstance(gain, (int, float)) or not 0.0 < gain <= 1.0:
            raise LimitDefinitionError(f"gain must be in (0, 1], got {gain!r}")
        d_min = _finite("minimum_distance_from_collisions", minimum_distance_from_collisions)
        detection = _finite("collision_detection_distance", collision_detection_distance)
        if detection < d_min:
            raise LimitDefinitionError(
                f"collision_detection_distance ({detection!r}) must be >= "
                f"minimum_distance_from_collisions ({d_min!r})"
            )
        relaxation = _finite("bound_relaxation", bound_relaxation)
        if not isinstance(broadphase, (bool, np.bool_)):
            raise LimitDefinitionError(f"broadphase must be True or False, got {broadphase!r}")
        self.model = model
        self.gain = float(gain)
        self.minimum_distance_from_collisions = d_min
        self.collision_detection_distance = detection
        self.bound_relaxation = relaxation
        self.broadphase = bool(broadphase)
        self.broadphase_min_pairs = _BROADPHASE_MIN_PAIRS
        self.geom_id_pairs: list[tuple[int, int]] = expand_geom_pairs(model, geom_pairs)
        self.max_num_contacts = len(self.geom_id_pairs)

        pairs = np.array(self.geom_id_pairs, dtype=np.intp).reshape(-1, 2)
        self._geom1 = pairs[:, 0].copy()
        self._geom2 = pairs[:, 1].copy()
        self._pair_list = [(int(g1), int(g2)) for g1, g2 in self.geom_id_pairs]
        self._reach_sq = pair_reach_squared(model, self._geom1, self._geom2, detection)
        count, nv = self.max_num_contacts, model.nv
        self._candidate_buffer = np.empty(count, dtype=np.intp)
        self._rows = np.empty((count, nv))
        self._bounds = np.empty(count)
        self._fromto = np.empty(6)
        self._normal = np.empty(3)
        self._jac1 = np.empty((3, nv))
        self._jac2 = np.empty((3, nv))

    # ---------------------------------------------------------------- queries
    def _candidates(self, data: mujoco.MjData) -> list[int] | range:
        """Indices of the pairs that may be within the detection distance (broadphase)."""
        if not self.broadphase or self.max_num_contacts < self.broadphase_min_pairs:
            return range(self.max_num_contacts)
        count = candidate_pairs(
            self._geom1,
            self._geom2,
            self._reach_sq,
            data.geom_xpos,
            data.geom_xmat,
            self.model.geom_aabb,
            self.collision_detection_distance,
            self._candidate_buffer,
        )
        return self._candidate_buffer[:count].tolist()

    def _active_rows(self, configuration: Configuration) -> list[int]:
        """Fill ``_rows[i]``, ``_bounds[i]`` for the i-th pair in range; return their indices."""
        model, data = self.model, configuration.data
        fromto, jac1, jac2 = self._fromto, self._jac1, self._jac2
        detection = self.collision_detection_distance
        d_min, gain, relaxation = (
            self.minimum_distance_from_collisions,
            self.gain,
            self.bound_relaxation,
        )
        active: list[int] = []
        normal = self._normal
        for index in self._candidates(data):
            g1, g2 = self._pair_list[index]
            distance = mujoco.mj_geomDistance(model, data, g1, g2, detection, fromto)
            if distance >= detection:
                continue
            slot = len(active)
            sign = -1.0 if distance >= 0.0 else 1.0
            if math.dist(fromto[:3], fromto[3:]) > _DEGENERATE_SEGMENT:
                row = compute_contact_normal_jacobian(
                    model, data, g1, g2, fromto, normal, jac1, jac2
                )
                np.multiply(row, sign, out=self._rows[slot])
            elif not self._centre_line_row(data, g1, g2, self._rows[slot]):
                continue
            margin = distance - d_min
            self._bounds[slot] = gain * margin + relaxation if margin > 0.0 else relaxation
            active.append(index)
        return active

    def _centre_line_row(
        self, data: mujoco.MjData, geom1: int, geom2: int, out: np.ndarray
    ) -> bool:
        r"""Row for touching geoms (:math:`p_1 = p_2`): separate along the centre line.

        :math:`n = (x_1 - x_2)/\lVert x_1 - x_2 \rVert` from the geom centres stands in
        for the separation direction; writes :math:`n^T (J_{p_2} - J_{p_1})` into
        ``out``. False when the centres coincide too (no direction at all).
        """
        direction = data.geom_xpos[geom1] - data.geom_xpos[geom2]
        length = math.sqrt(direction @ direction)
        if length <= _DEGENERATE_SEGMENT:
            return False
        model, fromto, jac1, jac2 = self.model, self._fromto, self._jac1, self._jac2
        mujoco.mj_jac(model, data, jac1, None, fromto[:3], int(model.geom_bodyid[geom1]))
        mujoco.mj_jac(model, data, jac2, None, fromto[3:], int(model.geom_bodyid[geom2]))
        np.subtract(jac2, jac1, out=jac2)
        np.matmul(direction / length, jac2, out=out)
        return True

    # ------------------------------------------------------------------ limit
    def compute_qp_inequalities(self, configuration: Configuration, dt: float) -> Constraint:
        r"""Rows :math:`G \Delta q \le h`, one per pair (module docstring).

        Args:
            configuration: Robot configuration with kinematics up to date.
            dt: Integration timestep in [s]; unused, the bounds are in displacement units.

        Returns:
            ``G`` of shape ``(max_num_contacts, nv)`` and ``h`` of shape
            ``(max_num_contacts,)``, in [m]; pairs out of range have a zero row and
            :math:`h = +\infty`. No pairs at all gives an inactive constraint.
        """
        if self.max_num_contacts == 0:
            return Constraint()
        active = self._active_rows(configuration)
        G = np.zeros((self.max_num_contacts, self.model.nv))
        h = np.full(self.max_num_contacts, np.inf)
        if active:
            G[active] = self._rows[: len(active)]
            h[active] = self._bounds[: len(active)]
        return Constraint(G, h)

    def compute_qp_bounds_and_rows(
        self, configuration: Configuration, dt: float
    ) -> tuple[Bounds | None, Constraint]:
        """The rows of the pairs in range only (the others are ``0 ≤ +∞``): same feasible set."""
        if self.max_num_contacts == 0:
            return None, Constraint()
        count = len(self._active_rows(configuration))
        if count == 0:
            return None, Constraint()
        return None, Constraint(self._rows[:count].copy(), self._bounds[:count].copy())
