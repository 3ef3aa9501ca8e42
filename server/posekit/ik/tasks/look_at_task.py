r"""Look-at task: point a frame's axis at a target point in the world."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from posekit.ik.exceptions import TargetNotSet
from posekit.ik.lie.utils import skew
from posekit.ik.tasks.pointing import PointingTask
from posekit.ik.tasks.validation import target_vector

if TYPE_CHECKING:
    from posekit.ik.configuration import Configuration

_MIN_DISTANCE = 1e-9


class LookAtTask(PointingTask):
    r"""Point the unit axis :math:`a` of a frame (rotation :math:`R`, position :math:`p`) at :math:`p^*`.

    With :math:`r = R^T (p^* - p)`, :math:`n = \|r\|` and :math:`\hat d = r / n`,

    .. math::

        e(q) = a - \hat d, \qquad
        J(q) = \frac{1}{n}\,(I - \hat d \hat d^T)\,\big(J_v - [r]_\times J_\omega\big),

    with :math:`[J_v; J_\omega]` the frame's body Jacobian. The error is unitless and has
    rank two: roll about the line of sight stays free. When the target coincides with
    the frame origin the error and Jacobian are zero.
    """

    def __init__(
        self,
        frame_name: str | int,
        frame_type: str,
        axis: object = (0.0, 0.0, 1.0),
        cost: object = 1.0,
        gain: float = 1.0,
        lm_damping: float = 0.0,
    ) -> None:
        super().__init__(frame_name, frame_type, axis, cost, gain, lm_damping)
        self.target_pos: np.ndarray | None = None

    def set_target(self, target_pos: object) -> None:
        """Set the point :math:`p^*` [m] to look at, in the world, shape ``(3,)``."""
        self.target_pos = target_vector(target_pos, 3, "target_pos")

    def set_target_from_configuration(self, configuration: Configuration) -> None:
        """Set the target one meter along the current axis, :math:`p + R a`."""
        rotation, position, _ = self._frame_state(configuration)
        self.set_target(position + rotation @ self.axis)

    def _error_and_jacobian(self, configuration: Configuration) -> tuple[np.ndarray, np.ndarray]:
        if self.target_pos is None:
            raise TargetNotSet(type(self).__name__)
        rotation, position, frame_id = self._frame_state(configuration)
        nv = configuration.model.nv
        direction = rotation.T @ (self.target_pos - position)
        distance = float(np.linalg.norm(direction))
        if distance < _MIN_DISTANCE:
            return np.zeros(3), np.zeros((3, nv))
        unit = direction / distance
        body_jacobian = configuration.frame_jacobian_by_id(frame_id, self.frame_type)
        projector = (np.eye(3) - np.outer(unit, unit)) / distance
        jacobian = projector @ (body_jacobian[:3] - skew(direction) @ body_jacobian[3:])
        return self.axis - unit, jacobian
