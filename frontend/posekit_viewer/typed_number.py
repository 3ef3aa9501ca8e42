"""A number field whose value is applied once: on Enter, or when typing pauses.

viser sends a number field's value on every keystroke, so typing ``0.05`` into a live
session would apply 0, then 0.0, then 0.05, and a refused last keystroke would leave an
earlier prefix in force. A :class:`TypedNumber` applies the field's value only when the
browser's user presses Enter in it (the field sits alone in a viser form, whose submit
is Enter) or once it has not changed for :data:`COMMIT_PAUSE_S` (viser has no blur
event), and when that value is refused puts the last accepted one back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import viser

from posekit_viewer.panel_support import from_client

COMMIT_PAUSE_S = 0.8  # [s] without a keystroke before a typed value is applied
NUMBER_PRECISION = 7  # decimals a typed value may have (viser's limit)


def add_typed_number(
    gui: viser.GuiApi,
    label: str,
    value: float,
    apply: Callable[[Any, float], bool],
    **options: Any,
) -> TypedNumber:
    """A number field ``label`` in its own borderless form (Enter commits it), in the GUI
    folder being built; ``options`` go to ``gui.add_number`` (``min``, ``max``, …)."""
    with gui.add_form(None) as form:
        widget = gui.add_number(label, initial_value=float(value), **options)
    widget.precision = NUMBER_PRECISION
    return TypedNumber(widget, apply, form=form)


class TypedNumber:
    """Applies ``apply(event, value)`` (True: accepted) to a viser number field's value
    on Enter (``form``'s submit) or once typing pauses; a refused value is replaced by
    the last accepted one."""

    def __init__(
        self,
        widget: Any,
        apply: Callable[[Any, float], bool],
        pause: float = COMMIT_PAUSE_S,
        form: viser.GuiFormHandle | None = None,
    ) -> None:
        self.widget = widget
        self.accepted = float(widget.value)
        self._apply = apply
        self._pause = pause
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        widget.on_update(self._typed)
        if form is not None:
            form.on_submit(self._submitted)

    def _typed(self, event: Any) -> None:
        if not from_client(event):
            return
        value = float(self.widget.value)
        with self._lock:
            self._cancel()
            if value == self.accepted:
                return  # typed back, or already committed by Enter
            self._timer = threading.Timer(self._pause, self._commit, (event, value))
            self._timer.daemon = True
            self._timer.start()

    def _submitted(self, event: Any) -> None:
        """Enter: the field's value now, whatever keystrokes are still on their way."""
        if not from_client(event):
            return
        value = float(self.widget.value)
        with self._lock:
            self._cancel()
        if value != self.accepted:
            self._commit(event, value)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    @property
    def pending(self) -> bool:
        """Whether a typed value waits to be applied (the field is not to be overwritten)."""
        timer = self._timer
        return timer is not None and timer.is_alive()

    def _commit(self, event: Any, value: float) -> None:
        if self._apply(event, value):
            self.accepted = value
        else:
            self.widget.value = self.accepted

    def show(self, value: float) -> None:
        """A value set elsewhere (the session's): the one a refusal goes back to."""
        self.accepted = float(value)
