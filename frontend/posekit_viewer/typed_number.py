"""A number field whose value is applied once, when the browser's user stops typing.

viser sends a number field's value on every keystroke, so typing ``0.05`` into a live
session would apply 0, then 0.0, then 0.05, and a refused last keystroke would leave an
earlier prefix in force. A :class:`TypedNumber` applies the field's value only once it
has not changed for :data:`COMMIT_PAUSE_S` (viser 1.1 has no public Enter or blur event
to commit on), and when that value is refused puts the last accepted one back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from posekit_viewer.panel_support import from_client

COMMIT_PAUSE_S = 0.8  # [s] without a keystroke before a typed value is applied


class TypedNumber:
    """Applies ``apply(event, value)`` (True: accepted) to a viser number field's value
    once typing pauses; a refused value is replaced by the last accepted one."""

    def __init__(
        self, widget: Any, apply: Callable[[Any, float], bool], pause: float = COMMIT_PAUSE_S
    ) -> None:
        self.widget = widget
        self.accepted = float(widget.value)
        self._apply = apply
        self._pause = pause
        self._timer: threading.Timer | None = None
        self._typed_value = self.accepted
        self._lock = threading.Lock()
        widget.on_update(self._typed)

    def _typed(self, event: Any) -> None:
        if not from_client(event):
            return
        with self._lock:
            self._typed_value = float(self.widget.value)
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self._pause, self._commit, (event,))
            self._timer.daemon = True
            self._timer.start()

    @property
    def pending(self) -> bool:
        """Whether a typed value waits to be applied (the field is not to be overwritten)."""
        timer = self._timer
        return timer is not None and timer.is_alive()

    def _commit(self, event: Any) -> None:
        with self._lock:
            value, self._timer = self._typed_value, None
        if self._apply(event, value):
            self.accepted = value
        else:
            self.widget.value = self.accepted

    def show(self, value: float) -> None:
        """A value set elsewhere (the session's): the one a refusal goes back to."""
        self.accepted = float(value)
