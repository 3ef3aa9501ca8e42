"""The pure parts of the viewer's controls: log-slider mapping, camera framing, gizmo size,
solve-time summary."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from posekit.sessions.live.state import SessionState
from posekit_viewer.camera_framing import (
    DEFAULT_DIRECTION,
    FILL_HEIGHT,
    FILL_WIDTH,
    PANEL_SHARE,
    box_corners,
    frame_box,
    view_axes,
)
from posekit_viewer.gizmos import GIZMO_FRACTION, gizmo_scale
from posekit_viewer.log_slider import SLIDER_STEP, decade_marks, from_slider, to_slider
from posekit_viewer.solve_times import SolveTimes

COSTS = (1e-4, 2.5e-4, 0.001, 0.0035, 0.012, 0.5, 1.0, 3.16, 12.5, 640.0, 1000.0)


@pytest.mark.parametrize("value", COSTS)
def test_a_value_survives_the_log_slider_round_trip(value: float) -> None:
    position = to_slider(value, 1e-4, 1e3)
    assert position == pytest.approx(math.log10(value))
    assert from_slider(position) == value  # exactly: three significant digits


def test_slider_positions_map_to_readable_increasing_values() -> None:
    positions = np.arange(-4.0, 3.0 + SLIDER_STEP / 2, SLIDER_STEP)
    values = [from_slider(float(p)) for p in positions]
    assert all(b > a for a, b in itertools.pairwise(values))  # no two steps alike
    for position, value in zip(positions, values, strict=True):
        assert value == float(f"{value:.3g}")  # three significant digits
        # Back to the slider within a fraction of a step: the thumb does not jump.
        assert abs(to_slider(value, 1e-4, 1e3) - position) < 0.25 * SLIDER_STEP


def test_values_outside_the_slider_sit_at_its_ends() -> None:
    assert to_slider(0.0, 1e-4, 1e3) == -4.0
    assert to_slider(5000.0, 1e-4, 1e3) == 3.0
    marks = decade_marks(1e-4, 1e3)
    assert [label for _, label in marks] == ["1e-4", "0.01", "1", "1000"]
    assert [p for p, _ in marks] == sorted(p for p, _ in marks)


def _project(points: np.ndarray, position: np.ndarray, look_at: np.ndarray, fov: float,
             aspect: float) -> np.ndarray:  # fmt: skip
    """Normalised image coordinates (x, y in [-1, 1] inside the view) of a pinhole camera."""
    forward = look_at - position
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    relative = points - position
    depth = relative @ forward
    tan_half = math.tan(fov / 2.0)
    return np.stack(
        [(relative @ right) / (depth * tan_half * aspect), (relative @ up) / (depth * tan_half)],
        axis=1,
    )


@pytest.mark.parametrize(
    ("low", "high", "aspect"),
    [
        ([-0.09, -0.09, 0.0], [0.55, 0.09, 0.74], 1400 / 900),  # arm7
        ([-0.09, -0.2, 0.0], [0.39, 0.2, 1.26], 1400 / 900),  # G1
        ([-0.74, -0.64, -0.75], [0.74, 0.38, 1.06], 1400 / 900),  # ALOHA on its table
        ([-1.0, -1.0, 0.0], [1.0, 1.0, 0.2], 0.6),  # a flat box in a tall, narrow view
    ],
)
def test_the_framed_box_fills_its_share_of_the_view(
    low: list[float], high: list[float], aspect: float
) -> None:
    """Whole, beside the control panel on a landscape view, filling its share."""
    fov = math.radians(45.0)
    pose = frame_box(np.array(low), np.array(high), fov, aspect)
    direction = pose.position - pose.look_at
    np.testing.assert_allclose(np.cross(direction, DEFAULT_DIRECTION), 0.0, atol=1e-9)
    image = _project(box_corners(np.array(low), np.array(high)), pose.position, pose.look_at,
                     fov, aspect)  # fmt: skip
    panel = PANEL_SHARE if aspect > 1.2 else 0.0
    # Every corner is in the view and left of the panel, the box about the middle of it.
    assert image[:, 0].min() >= -1.0 and image[:, 0].max() <= 1.0 - 2 * panel
    assert np.max(np.abs(image[:, 1])) <= FILL_HEIGHT + 1e-9
    middle = (image[:, 0].min() + image[:, 0].max()) / 2
    assert middle == pytest.approx(-panel, abs=0.15)
    height = np.ptp(image[:, 1]) / 2.0  # fraction of the view's height
    width = np.ptp(image[:, 0]) / 2.0 / (1.0 - panel)  # of the uncovered width
    assert max(height / FILL_HEIGHT, width / FILL_WIDTH) > 0.8  # the tight side nearly fills


def test_framing_straight_down_and_tiny_boxes() -> None:
    w, right, up = view_axes(np.array([0.0, 0.0, 1.0]))
    assert np.linalg.norm(np.cross(w, [0.0, 0.0, 1.0])) < 1e-12
    np.testing.assert_allclose([w @ right, w @ up, right @ up], 0.0, atol=1e-12)
    pose = frame_box(np.zeros(3), np.zeros(3), math.radians(45.0), 1.5, np.array([0, 0, 2.0]))
    assert 0.01 < np.linalg.norm(pose.position - pose.look_at) < 1.0  # a point: 5 cm box


def test_gizmos_are_sized_from_the_robot() -> None:
    arm = gizmo_scale(np.array([-0.09, -0.09, 0.0]), np.array([0.55, 0.09, 0.74]))
    g1 = gizmo_scale(np.array([-0.09, -0.2, 0.0]), np.array([0.39, 0.2, 1.26]))
    assert arm == pytest.approx(GIZMO_FRACTION * 0.74)
    assert g1 == pytest.approx(GIZMO_FRACTION * 1.26)
    assert gizmo_scale(np.zeros(3), np.full(3, 1e-3)) == 0.05  # never too small to grab


def _state(seq: int, solve_us: float, status: str = "running") -> SessionState:
    return SessionState(seq, 0.0, [0.0], {}, status == "converged", status, None, solve_us)


def test_solve_time_is_a_recent_median_and_the_last_step() -> None:
    times = SolveTimes(window=5)
    assert times.text() == "–"
    times.record(_state(1, 0.0))  # a session's first state: no solve yet
    times.record(_state(2, 6702.0))  # the cold first step
    assert times.text() == "last step 6702 µs"
    for seq, us in enumerate((100.0, 90.0, 110.0, 95.0), start=3):
        times.record(_state(seq, us))
    times.record(_state(6, 95.0))  # the same step seen again counts once
    times.record(_state(7, 0.0, "paused"))
    assert times.count == 5
    assert times.median() == 100.0 and times.last() == 95.0
    times.record(_state(8, 80.0, "converged"))  # the window drops the cold step
    assert times.median() == 95.0
    assert times.text() == "median 95 µs of 5 steps · last 80 µs"
