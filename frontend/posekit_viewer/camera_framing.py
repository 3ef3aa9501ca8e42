"""Framing: the camera pose that shows an axis-aligned box whole, from a given direction.

The camera looks at the box centre :math:`c` from :math:`c + d\\,w` (:math:`w`: unit
vector toward the eye), with right and up vectors :math:`r = \\hat{(\\text{up} \\times
w)}`, :math:`u = w \\times r`. A corner :math:`p` (relative to :math:`c`) sits at depth
:math:`z = d - p \\cdot w` and lateral offsets :math:`x = p \\cdot r`, :math:`y = p \\cdot
u`; it is inside the fraction :math:`k` of a perspective view of vertical field of view
:math:`\\phi` and aspect :math:`a` (width / height) when
:math:`|y| \\le k \\tan(\\phi/2)\\, z` and :math:`|x| \\le k\\, a \\tan(\\phi/2)\\, z`.
The smallest distance that keeps every corner inside is

.. math:: d = \\max_p \\Big(p \\cdot w + \\max\\big(\\tfrac{|y|}{k_v \\tan(\\phi/2)},
          \\tfrac{|x|}{k_h\\, a \\tan(\\phi/2)}\\big)\\Big)

so the box spans at most :math:`k_v` of the view's height and :math:`k_h` of its width,
and exactly one of them on its tightest side.

viser's control panel covers the right :data:`PANEL_SHARE` :math:`s` of a landscape view
(aspect above :data:`LANDSCAPE`): there the box is framed in the part left of it — the
width fraction is :math:`k_h (1 - s)` and the camera and the point it looks at move right
by :math:`s\\, d\\, a \\tan(\\phi/2)`, which puts the box centre at the middle of the
uncovered part (normalised :math:`x = -s`). Lengths in meters, angles in radians.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

UP = np.array([0.0, 0.0, 1.0])
DEFAULT_DIRECTION = np.array([1.6, -1.6, 0.9])  # toward the eye: front right, from above
FILL_HEIGHT = 0.75  # the box spans at most this fraction of the view's height
FILL_WIDTH = 0.8  # and of the width the control panel leaves uncovered
PANEL_SHARE = 0.25  # of a landscape view's width, covered by the control panel (right)
LANDSCAPE = 1.2  # aspect (width / height) above which the panel is beside the scene
MIN_SIZE = 0.05  # [m] a smaller box is framed as a box of this size


@dataclass(frozen=True)
class CameraPose:
    """Where a camera is and what it looks at (world frame, meters)."""

    position: np.ndarray
    look_at: np.ndarray


def box_corners(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The 8 corners of the axis-aligned box ``[low, high]``, shape (8, 3)."""
    pick = np.array([[i >> 2 & 1, i >> 1 & 1, i & 1] for i in range(8)], dtype=bool)
    return np.where(pick, high, low)


def view_axes(direction: np.ndarray, up: np.ndarray = UP) -> tuple[np.ndarray, ...]:
    """Unit vectors (toward the eye, right, up) of a camera looking along ``-direction``."""
    w = direction / np.linalg.norm(direction)
    right = np.cross(up, w)
    if np.linalg.norm(right) < 1e-9:  # looking straight up or down
        right = np.cross(np.array([0.0, 1.0, 0.0]), w)
    right /= np.linalg.norm(right)
    return w, right, np.cross(w, right)


def frame_box(
    low: np.ndarray,
    high: np.ndarray,
    fov: float,
    aspect: float,
    direction: np.ndarray = DEFAULT_DIRECTION,
) -> CameraPose:
    """The camera pose that shows the box ``[low, high]`` whole (module docstring).

    ``fov`` is the vertical field of view [rad], ``aspect`` the view's width / height,
    ``direction`` points from the box toward the eye (any length).
    """
    centre = (np.asarray(low, float) + np.asarray(high, float)) / 2.0
    half = np.maximum((np.asarray(high, float) - np.asarray(low, float)) / 2.0, MIN_SIZE / 2)
    corners = box_corners(-half, half)
    w, right, up = view_axes(np.asarray(direction, float))
    panel = PANEL_SHARE if aspect > LANDSCAPE else 0.0
    tan_v = np.tan(fov / 2.0) * FILL_HEIGHT
    tan_h = np.tan(fov / 2.0) * aspect * FILL_WIDTH * (1.0 - panel)
    needed = corners @ w + np.maximum(np.abs(corners @ up) / tan_v, np.abs(corners @ right) / tan_h)
    distance = float(np.max(needed))
    shift = panel * distance * aspect * np.tan(fov / 2.0) * right
    return CameraPose(centre + distance * w + shift, centre + shift)
