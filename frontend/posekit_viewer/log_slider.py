"""One control per value: a log-scale slider with its number field.

Weights span decades (a posture cost of 0.001 next to a frame cost of 1), so the
slider moves along the exponent: slider position :math:`p = \\log_{10} v`, value
:math:`v = 10^{p}`, rounded to ``SIGNIFICANT`` significant digits so that a drag gives
readable numbers. The number field under it holds the exact value: a value typed there
is kept as typed and applied on Enter or once typing pauses (:class:`TypedNumber`), and the slider
follows (values outside the slider's range, 0 included, put it at its nearest end). Viser's slider has a number box of its own,
which shows the exponent (viser has no public way to hide it for one slider).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import viser

from posekit_viewer.panel_support import Follower, from_client
from posekit_viewer.typed_number import add_typed_number

SIGNIFICANT = 3  # digits of a value set by dragging
SLIDER_STEP = 0.01  # [decades]: 1 % apart at most


def to_slider(value: float, low: float, high: float) -> float:
    """Slider position of ``value``: its exponent, clamped to ``[log10 low, log10 high]``."""
    if value <= low:
        return math.log10(low)
    if value >= high:
        return math.log10(high)
    return math.log10(value)


def from_slider(position: float) -> float:
    """The value at a slider position, ``10^position`` to ``SIGNIFICANT`` digits."""
    value = 10.0**position
    digits = SIGNIFICANT - 1 - math.floor(math.log10(value))
    return round(value, digits)


def decade_marks(low: float, high: float) -> tuple[tuple[float, str], ...]:
    """Slider marks at both ends and every other decade between, none closer than a
    decade and a half to the upper end (their labels would overlap)."""
    top = math.log10(high)
    inner = range(math.ceil(math.log10(low)), math.floor(top) + 1, 2)
    exponents = sorted({math.log10(low), top, *(p for p in inner if top - p >= 1.5)})
    return tuple((p, _short(10.0**p)) for p in exponents)


def _short(value: float) -> str:
    return f"{value:g}" if 1e-3 <= value < 1e4 else f"1e{round(math.log10(value))}"


class LogSlider:
    """A value between ``low`` and ``high`` (> 0) on a log slider, exact in its field.

    ``on_change(event, value)`` is called when a browser changes either widget; it
    returns whether the value was accepted (a rejected value is put back by the next
    :meth:`show`). Create it inside the GUI folder it belongs to.
    """

    def __init__(
        self,
        gui: viser.GuiApi,
        label: str,
        value: float,
        low: float,
        high: float,
        on_change: Callable[[Any, float], bool],
    ) -> None:
        self.low, self.high = low, high
        self.slider = gui.add_slider(
            label, min=math.log10(low), max=math.log10(high), step=SLIDER_STEP,
            initial_value=to_slider(value, low, high), marks=decade_marks(low, high),
        )  # fmt: skip
        self._follower = Follower()
        self._bind(gui, label, value, on_change)

    def _bind(
        self, gui: viser.GuiApi, label: str, value: float, on_change: Callable[[Any, float], bool]
    ) -> None:
        def typed(event: Any, value: float) -> bool:
            if not on_change(event, value):
                return False
            self.slider.value = to_slider(value, self.low, self.high)  # type: ignore[misc]
            return True

        self._typed = add_typed_number(gui, f"{label} =", value, typed, min=0.0)
        self.number = self._typed.widget

        @self.slider.on_update
        def _(event: Any) -> None:
            if from_client(event):
                value = from_slider(float(self.slider.value))
                if on_change(event, value):
                    self.number.value = value
                    self._typed.show(value)

    @property
    def value(self) -> float:
        """The exact value (the number field's)."""
        return float(self.number.value)

    def show(self, value: float) -> None:
        """Show a value set elsewhere (left alone while a browser is changing it)."""
        if self._typed.pending or any(map(self._follower.editing, (self.slider, self.number))):
            return
        # The slider first: once ``value`` (the number's) reads the new value, so does it.
        self._follower.show(self.slider, to_slider(float(value), self.low, self.high))
        self._follower.show(self.number, float(value))
        self._typed.show(float(value))
