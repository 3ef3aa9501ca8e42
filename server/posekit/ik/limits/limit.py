r"""Limit base classes.

A limit bounds the configuration step :math:`\Delta q` by linear inequalities
:math:`G \Delta q \le h`. Limits that only bound single coordinates
(:math:`l_i \le \Delta q_i \le u_i`) also expose them as simple bounds, which the
solver passes to QP backends that take them natively instead of :math:`\pm I` rows.
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from posekit.ik.observed import Observed

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration


class Constraint(NamedTuple):
    r"""Linear inequalities :math:`G \Delta q \le h`; both ``None`` when inactive."""

    G: np.ndarray | None = None
    h: np.ndarray | None = None

    @property
    def inactive(self) -> bool:
        """True when the constraint has no rows."""
        return self.G is None and self.h is None


class Bounds(NamedTuple):
    r"""Simple bounds :math:`l \le \Delta q \le u`, each of shape ``(nv,)``; ±inf where free."""

    lower: np.ndarray
    upper: np.ndarray


class Limit(Observed, abc.ABC):
    """Anything that restricts the configuration step of the IK problem.

    Assigning a public attribute notifies the compiled plans that use the limit
    (:class:`posekit.ik.observed.Observed`).
    """

    @abc.abstractmethod
    def compute_qp_inequalities(self, configuration: Configuration, dt: float) -> Constraint:
        r"""All inequalities :math:`G \Delta q \le h` of this limit at ``configuration``.

        Args:
            configuration: Robot configuration :math:`q`.
            dt: Integration timestep in [s].
        """

    def compute_qp_bounds_and_rows(
        self, configuration: Configuration, dt: float
    ) -> tuple[Bounds | None, Constraint]:
        """This limit split into simple bounds and remaining rows (same feasible set).

        The default has no simple bounds: every inequality is a row.
        """
        return None, self.compute_qp_inequalities(configuration, dt)


def bounds_as_rows(bounds: Bounds) -> Constraint:
    r"""Simple bounds as rows :math:`[I; -I] \Delta q \le [u; -l]`, dropping infinite sides."""
    nv = bounds.upper.shape[0]
    eye = np.eye(nv)
    upper_rows = np.isfinite(bounds.upper)
    lower_rows = np.isfinite(bounds.lower)
    if not upper_rows.any() and not lower_rows.any():
        return Constraint()
    G = np.vstack((eye[upper_rows], -eye[lower_rows]))
    h = np.concatenate((bounds.upper[upper_rows], -bounds.lower[lower_rows]))
    return Constraint(G, h)
