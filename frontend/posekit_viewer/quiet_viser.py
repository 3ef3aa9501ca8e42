"""viser's own console output, sent to the ``viser`` logger at DEBUG level.

viser prints with ``rich.print`` on rich's global console, whatever ``verbose`` says: a
banner with its internal address when a server starts, "(viser) Server stopped" when
it stops. posekit's viewer servers are internal (browsers reach them through the app's
relay), so on the app's terminal that text is noise with a misleading address.
:func:`route_viser_output` points rich's global console — which in a posekit process
only viser uses — at the ``viser`` logger: the lines are kept, at DEBUG, and reach the
terminal only when debug logging is on. posekit's own loggers are left as they are.
"""

from __future__ import annotations

import io
import logging
import threading

import rich

VISER_LOGGER = "viser"

_lock = threading.Lock()
_routed = False


class LogWriter(io.TextIOBase):
    """A text stream that logs each complete, non-blank line at DEBUG on ``logger``."""

    def __init__(self, logger: logging.Logger) -> None:
        super().__init__()
        self._logger = logger
        self._pending = ""
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            lines = (self._pending + text).split("\n")
            self._pending = lines.pop()
        for line in lines:
            if line.strip():
                self._logger.debug("%s", line.rstrip())
        return len(text)

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False


def route_viser_output() -> None:
    """Send rich's global console (viser's prints) to the ``viser`` logger (idempotent)."""
    global _routed
    with _lock:
        if _routed:
            return
        writer = LogWriter(logging.getLogger(VISER_LOGGER))
        rich.reconfigure(file=writer, force_terminal=False, color_system=None, width=100)
        _routed = True
