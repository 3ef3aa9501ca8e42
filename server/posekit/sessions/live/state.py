"""The latest solved state of a session, as streamed to watchers.

Its fields are defined once, here; the websocket ``state`` message is
``{"type": "state", <the fields>}`` and its schema
(:class:`posekit.api.protocol.StateMessage`) is checked against them by the tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

import msgspec
import numpy as np

from posekit.sessions.live import state_frame

Status = Literal["running", "converged", "failed", "paused"]


@dataclass(slots=True)
class SessionState:
    """One solve step's outcome; never changed once published.

    Attributes:
        seq: Step counter of the session (strictly increasing).
        time: Wall-clock time [s since the epoch] when the step finished.
        q: Configuration after the step (size nq).
        errors: Task name → norm of the task error at ``q``, in stack order (None for
            tasks without an error vector and for disabled tasks).
        converged: Whether the step was below tolerance (the session is parked).
        status: running | converged | failed | paused.
        error: Why the last step failed (``status == "failed"``), else None.
        solve_us: Wall time of the step [µs] (QP, integration and error norms).
        ref: The ``ref`` of the latest target applied before this step, if any.
        revision: The session's change counter when the step ran; a state whose
            revision is newer than the previous one answers a change.
        throttled: Whether the session is above its fair share: its steps are heavy
            and the solver is full, so it is stepped at its share and lighter sessions
            keep their rate.
        rate_hz: The rate the solver steps this session at [Hz]: its own ``rate_hz``,
            or its fair share's while it is throttled.
        limits: Limit name → the joints it holds at a bound after the step
            (:mod:`~posekit.sessions.live.binding`); only limits that bind.
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
    rate_hz: float = 0.0
    limits: dict[str, list[str]] = field(default_factory=dict)
    _json: str | None = field(default=None, init=False, repr=False, compare=False)
    _binary: bytes | None = field(default=None, init=False, repr=False, compare=False)

    def message(self) -> dict[str, Any]:
        """The websocket ``state`` message: ``type``, then :data:`STATE_FIELDS` in order."""
        # Spelled out: a literal is about twice as fast as a comprehension of getattr.
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
            "throttled": self.throttled,
            "rate_hz": self.rate_hz,
            "limits": self.limits,
        }

    def json(self) -> str:
        """The ``state`` message (:meth:`message`) as JSON text, encoded once for all the
        session's watchers."""
        if self._json is None:
            self._json = JSON_ENCODER.encode(self.message()).decode()
        return self._json

    def binary(self) -> bytes:
        """The binary state frame (:mod:`posekit.sessions.live.state_frame`), encoded once."""
        if self._binary is None:
            self._binary = state_frame.encode(
                seq=self.seq,
                revision=self.revision,
                time=self.time,
                solve_us=self.solve_us,
                rate_hz=self.rate_hz,
                status=self.status,
                converged=self.converged,
                throttled=self.throttled,
                q=self.q,
                errors=list(self.errors.values()),
                ref=self.ref,
                error=self.error,
            )
        return self._binary


STATE_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(SessionState) if f.init)
"""The fields of a state message, in order (after its ``type``)."""


def _plain(value: object) -> object:
    """A NumPy scalar as the Python number it holds (for the JSON encoder)."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"a state holds a {type(value).__name__}, which JSON cannot encode")


JSON_ENCODER = msgspec.json.Encoder(enc_hook=_plain)
"""The encoder of the JSON ``state`` message (compact; a non-finite number is written as
``null``)."""
