"""Which limits bind after a step: the joints a limit holds at its bound.

Why a target is not reached is often a limit: a joint at the end of its range, or
moving as fast as its velocity limit allows. After each step, for every enabled
configuration limit, the hinge and slide joints within ``AT_BOUND`` of their bound
(the range less the limit's ``min_distance_from_limits``); for every velocity limit,
the joints whose speed :math:`|q_{k,i} - q_{k-1,i}| / dt` is at least ``AT_SPEED`` of
their limit. Collision avoidance and hard constraints are not reported yet.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from posekit.ik.limits import ConfigurationLimit, Limit, VelocityLimit

AT_BOUND = 1e-5  # [rad | m] closer to its bound than this, a joint is at it
AT_SPEED = 0.999  # of its velocity limit, a joint is at it
SCALAR = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))


@dataclass(frozen=True)
class _Bound:
    """One limit's checks: at the qpos addresses ``adr``, values in ``[low, high]``
    (configuration) or speeds under ``high`` (velocity, ``low`` None)."""

    name: str
    adr: np.ndarray
    low: np.ndarray | None
    high: np.ndarray
    joints: list[str]


class LimitWatch:
    """The binding checks of a plan's limits (module docstring)."""

    def __init__(self, model: mujoco.MjModel, limits: list[tuple[str, Limit]]) -> None:
        self._bounds = [b for name, limit in limits if (b := _bound(model, name, limit))]

    def binding(self, before: np.ndarray, after: np.ndarray, dt: float) -> dict[str, list[str]]:
        """Limit name → the joints it holds after a step from q ``before`` to ``after``."""
        found: dict[str, list[str]] = {}
        for bound in self._bounds:
            q = after[bound.adr]
            if bound.low is not None:
                at = (q <= bound.low + AT_BOUND) | (q >= bound.high - AT_BOUND)
            else:
                at = np.abs(q - before[bound.adr]) >= AT_SPEED * bound.high * dt
            if at.any():
                found[bound.name] = [bound.joints[i] for i in np.flatnonzero(at)]
        return found


def _bound(model: mujoco.MjModel, name: str, limit: Limit) -> _Bound | None:
    """The checks of one limit (None: a kind not reported, or nothing to check)."""
    if isinstance(limit, ConfigurationLimit):
        joints = [
            j for j in range(model.njnt) if model.jnt_limited[j] and model.jnt_type[j] in SCALAR
        ]
        adr = model.jnt_qposadr[joints].astype(int)
        low, high = limit.lower[adr], limit.upper[adr]
    elif isinstance(limit, VelocityLimit):
        scalar = [
            i for i, d in enumerate(limit.indices) if model.jnt_type[model.dof_jntid[d]] in SCALAR
        ]
        joints = [int(model.dof_jntid[limit.indices[i]]) for i in scalar]
        adr = model.jnt_qposadr[joints].astype(int)
        low, high = None, np.asarray(limit.limit, dtype=float)[scalar]
    else:
        return None
    if not joints:
        return None
    return _Bound(name, adr, low, high, [model.joint(j).name or f"joint {j}" for j in joints])
