"""The latest solved state of a session, as streamed to watchers.

Its fields are defined once, here; the websocket ``state`` message is
``{"type": "state", <the fields>}`` and its schema
(:class:`posekit.api.protocol.StateMessage`) is checked against them by the tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal, cast

import msgspec
import numpy as np

from posekit.sessions import state_frame

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
            and the loop is full, so it is stepped at its share (plus, in a solver
            process, the loop's time left over) and lighter sessions keep their rate.
        rate_hz: The rate the loop steps this session at [Hz]: its own ``rate_hz``, or
            the rate it gets (smoothed over its last steps) while it is throttled or
            the loop is too loaded to give it 90 % of its own.
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
    _json: bytes | None = field(default=None, init=False, repr=False, compare=False)
    _binary: bytes | None = field(default=None, init=False, repr=False, compare=False)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as :meth:`wire` (the dataclass default goes through ``fields()``)."""
        return from_wire, (self.wire(),)

    @classmethod
    def of_wire(cls, row: tuple[Any, ...]) -> SessionState:
        """The state of a :meth:`wire` tuple, with the encodings it carried."""
        return from_wire(row)

    def wire(self) -> tuple[Any, ...]:
        """The field values (in :data:`STATE_FIELDS` order), then the JSON and binary
        encodings made so far (None: not made): how a state crosses a pipe, thousands
        of times a second. A plain tuple pickles without a reduce call per object."""
        return (*self._values(), self._json, self._binary)

    def _values(self) -> tuple[Any, ...]:
        """The field values, in :data:`STATE_FIELDS` order."""
        return (
            self.seq,
            self.time,
            self.q,
            self.errors,
            self.converged,
            self.status,
            self.error,
            self.solve_us,
            self.ref,
            self.revision,
            self.throttled,
            self.rate_hz,
        )  # spelled out: 0.25 µs, against 1.3 µs for a generator of getattr

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
        }

    def json(self) -> str:
        """The ``state`` message as JSON text (:meth:`json_bytes`, decoded)."""
        return self.json_bytes().decode()

    def json_bytes(self) -> bytes:
        """The ``state`` message as JSON text in UTF-8, encoded once for all watchers: the
        very payload of its websocket text frame (kept as bytes, so that neither the pipe
        from the solver process nor the send decodes or encodes it again)."""
        encoded = self._json
        if encoded is None:
            self.encode(_JSON)
            encoded = cast(bytes, self._json)
        return encoded

    def binary(self) -> bytes:
        """The binary state frame (:mod:`posekit.sessions.state_frame`), encoded once."""
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

    def encode(self, formats: frozenset[str]) -> None:
        """Encode the state now in each of ``formats`` (``json``, ``binary``), so that
        its watchers only send bytes (each encoding is made once).

        JSON is encoded here (for :meth:`json_bytes` too: a solver process encodes
        every state it steps, and a call less counts), from a :class:`_StateMessage` (a
        struct, fields in :meth:`message`'s order) rather than the message dict: the
        same text without building a dict of 13 keys, about a third less work a state.
        """
        if self._json is None and "json" in formats:
            self._json = JSON_ENCODER.encode(_StateMessage(*self._values()))
        if "binary" in formats:
            self.binary()


STATE_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(SessionState) if f.init)
"""The fields of a state message, in order (after its ``type``)."""


def _plain(value: object) -> object:
    """A NumPy scalar as the Python number it holds (for the JSON encoder)."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"a state holds a {type(value).__name__}, which JSON cannot encode")


class _StateMessage(msgspec.Struct, tag_field="type", tag="state"):
    """The JSON ``state`` message: ``type``, then :data:`STATE_FIELDS` (checked at import)."""

    seq: int
    time: float
    q: Any
    errors: Any
    converged: bool
    status: str
    error: Any
    solve_us: float
    ref: Any
    revision: int
    throttled: bool
    rate_hz: float


if _StateMessage.__struct_fields__ != STATE_FIELDS:  # pragma: no cover - a definition error
    raise TypeError("_StateMessage's fields must be SessionState's, in order")

JSON_ENCODER = msgspec.json.Encoder(enc_hook=_plain)
"""The encoder of the JSON ``state`` message (compact; a non-finite number is written as
``null``)."""


def from_wire(row: tuple[Any, ...]) -> SessionState:
    """:meth:`SessionState.of_wire`, as a module function: what a pickled state names
    (one global, no attribute lookup when unpickled). The fields are stored straight
    from the tuple, in one frame: no ``__init__`` call (a thousand states a second)."""
    state: SessionState = _new(SessionState)
    (
        state.seq,
        state.time,
        state.q,
        state.errors,
        state.converged,
        state.status,
        state.error,
        state.solve_us,
        state.ref,
        state.revision,
        state.throttled,
        state.rate_hz,
        state._json,
        state._binary,
    ) = row
    return state


_new = object.__new__


def new_state(
    seq: int,
    time: float,
    q: list[float],
    errors: dict[str, float | None],
    converged: bool,
    status: Status,
    error: str | None,
    solve_us: float,
    ref: Any,
    revision: int,
    throttled: bool,
    rate_hz: float,
) -> SessionState:
    """``SessionState(...)`` of every field, positional: the state a session publishes
    each step. Stored here in one call: calling the class goes through its dataclass
    ``__init__`` by way of ``type.__call__``, which packs the arguments into a tuple
    first (about a fifth more work)."""
    state: SessionState = _new(SessionState)
    state.seq = seq
    state.time = time
    state.q = q
    state.errors = errors
    state.converged = converged
    state.status = status
    state.error = error
    state.solve_us = solve_us
    state.ref = ref
    state.revision = revision
    state.throttled = throttled
    state.rate_hz = rate_hz
    state._json = None
    state._binary = None
    return state


_JSON = frozenset({"json"})
"""The formats :meth:`SessionState.json_bytes` encodes in."""
