"""The latest solved state of a session, as streamed to watchers.

Its fields are defined once, here; the websocket ``state`` message is
``{"type": "state", <the fields>}`` and its schema
(:class:`posekit.api.protocol.StateMessage`) is checked against them by the tests.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any, Literal

Status = Literal["running", "converged", "failed", "paused"]


@dataclass(slots=True)
class SessionState:
    """One solve step's outcome; never changed once published.

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
        throttled: Whether the solve loop steps this session less often than its
            ``rate_hz``, because its steps are heavy and the loop is full (fair share).
    """

    seq: int
    time: float
    q: list[float]
    errors: dict[str, float | None]
    converged: bool
    status: Status
    error: str | None
    solve_us: float
    ref: Any = None
    revision: int = 0
    throttled: bool = False
    _json: str | None = field(default=None, init=False, repr=False, compare=False)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as the field values and the encoded JSON (states cross a pipe thousands of
        times a second; the dataclass default goes through ``fields()`` each time)."""
        return _restore, (tuple(getattr(self, name) for name in STATE_FIELDS), self._json)

    def message(self) -> dict[str, Any]:
        """The websocket ``state`` message."""
        return {"type": "state", **{name: getattr(self, name) for name in STATE_FIELDS}}

    def json(self) -> str:
        """The ``state`` message as JSON text, encoded once for all watchers."""
        if self._json is None:
            self._json = json.dumps(self.message(), separators=(",", ":"))
        return self._json


STATE_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(SessionState) if f.init)
"""The fields of a state message, in order (after its ``type``)."""


def _restore(values: tuple[Any, ...], encoded: str | None) -> SessionState:
    state = SessionState(*values)
    state._json = encoded
    return state
