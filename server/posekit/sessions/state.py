"""The latest solved state of a session, as streamed to watchers."""

from __future__ import annotations

import json
from typing import Any, Literal

Status = Literal["running", "converged", "failed", "paused"]


class SessionState:
    """One solve step's outcome; immutable once published.

    Attributes:
        seq: Step counter of the session (strictly increasing).
        time: Wall-clock time [s since the epoch] when the step finished.
        q: Configuration after the step (size nq).
        errors: Task name → norm of the task error at ``q`` (None for tasks without
            an error vector and for disabled tasks).
        converged: Whether the step was below tolerance (the session is parked).
        status: running | converged | failed | paused.
        error: Why the last step failed (``status == "failed"``), else None.
        solve_us: Wall time of the step [µs] (QP, integration and error norms).
        ref: The ``ref`` of the latest target applied before this step, if any.
        revision: The session's change counter when the step ran; a state whose
            revision is newer than the previous one answers a change.
    """

    __slots__ = (
        "_json",
        "converged",
        "error",
        "errors",
        "q",
        "ref",
        "revision",
        "seq",
        "solve_us",
        "status",
        "time",
    )

    def __init__(
        self,
        seq: int,
        time: float,
        q: list[float],
        errors: dict[str, float | None],
        converged: bool,
        status: Status,
        error: str | None,
        solve_us: float,
        ref: Any = None,
        revision: int = 0,
    ) -> None:
        self.seq = seq
        self.time = time
        self.q = q
        self.errors = errors
        self.converged = converged
        self.status = status
        self.error = error
        self.solve_us = solve_us
        self.ref = ref
        self.revision = revision
        self._json: str | None = None

    def message(self) -> dict[str, Any]:
        """The websocket ``state`` message."""
        return {
            "type": "state",
            "seq": self.seq,
            "time": self.time,
            "q": self.q,
            "errors": self.errors,
            "converged": self.converged,
            "status": self.status,
            "error": self.error,
            "solve_us": self.solve_us,
            "ref": self.ref,
            "revision": self.revision,
        }

    def json(self) -> str:
        """The ``state`` message as JSON text, encoded once for all watchers."""
        if self._json is None:
            self._json = json.dumps(self.message(), separators=(",", ":"))
        return self._json
