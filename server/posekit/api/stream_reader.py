"""What the stream does with one client's messages: size and rate checked, parsed, and
a target handed to the session (latest wins: the session keeps the newest target of each
task until the solver steps it); refusals go back to this client only.

A client that keeps sending far beyond its rate — refused more than ``FLOOD_FACTOR``
times its rate — is flooding: :class:`Flooding` ends its connection
(:mod:`~posekit.api.routes_stream`), so that refusing it one message at a time does not
cost the others."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from posekit.api.errors import describe_validation, status_of
from posekit.api.stream_limits import StreamLimits
from posekit.api.stream_protocol import CLIENT_MESSAGE, PingMessage, PongMessage
from posekit.api.token_bucket import TokenBucket
from posekit.ik.exceptions import PosekitError
from posekit.sessions.kinds.target import TARGET_FIELDS
from posekit.sessions.live.error_message import ErrorMessage
from posekit.sessions.live.session import Session
from posekit.sessions.live.subscription import Subscription

FLOOD_FACTOR = 10.0
"""Refusals a second, as a multiple of the client's rate, past which it is cut off."""
FLOOD_BURST_S = 0.1
"""[s] … in bursts of this much of it, or of ``FLOOD_MIN_BURST`` refusals if more: a
flooder is cut off after about 2 s worth of its rate, not after 11 s worth (1,320 messages
at the default rate, which 5 flooders reconnecting at once made the bystanders wait for)."""
FLOOD_MIN_BURST = 100.0


class Flooding(Exception):
    """The client sends far beyond its rate; its connection ends (module docstring)."""


def ref_of(raw: str | bytes) -> Any:
    """The client's ``ref`` of a refused message, when it can be read at all."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    ref = data.get("ref") if isinstance(data, dict) else None
    return ref if isinstance(ref, (str, int, float, bool)) and len(str(ref)) <= 128 else None


class ClientMessages:
    """Takes one client's messages (:meth:`take`, one call a message).

    Args:
        session: The client's session.
        subscription: The client's feed, where its refusals and pongs go.
        limits: Message size and rate at most.
        refused: Called with the code of every refusal (metrics).
        shared: The budget of every client of its credential together, if there is one
            (:mod:`~posekit.api.credential_budgets`).
    """

    def __init__(
        self,
        session: Session,
        subscription: Subscription,
        limits: StreamLimits,
        refused: Callable[[str], None],
        shared: TokenBucket | None = None,
    ) -> None:
        self.session = session
        self.shared = shared
        self.subscription = subscription
        self.limits = limits
        self.gate = TokenBucket(limits.rate)
        flood_rate = FLOOD_FACTOR * limits.rate  # refusals it may cause, in short bursts
        self.flood = TokenBucket(flood_rate, max(flood_rate * FLOOD_BURST_S, FLOOD_MIN_BURST))
        self.refused = refused

    def take(self, raw: str | bytes) -> None:
        """Check, parse and apply one client message (:class:`Flooding` when the client
        is cut off)."""
        size = len(raw)
        if size > self.limits.max_bytes:
            text = f"message of {size} bytes exceeds the limit of {self.limits.max_bytes} bytes"
            self._refuse("too_large", text, None)
            return
        own = self.gate.admit()
        if not own or (self.shared is not None and not self.shared.admit()):
            if not self.flood.admit():
                self.refused("flooding")
                raise Flooding(
                    f"more than {FLOOD_FACTOR * self.limits.rate:g} messages a second over "
                    f"the limit of {self.limits.rate:g}"
                )
            text = (
                f"more than {self.limits.rate:g} messages per second from this client"
                if not own
                else f"more than {self.shared.rate if self.shared else 0:g} messages per second "
                "from all clients of this access token together"
            ) + "; this message was dropped (send the latest target only)"
            self._refuse("rate_limited", text, ref_of(raw))
            return
        try:
            message = CLIENT_MESSAGE.validate_json(raw)
        except ValidationError as exc:
            self._refuse("invalid", _invalid(exc), ref_of(raw))
            return
        if isinstance(message, PingMessage):
            self.subscription.offer_message(PongMessage(ref=message.ref, time=time.time()))
            return
        fields = {k: v for k in TARGET_FIELDS if (v := getattr(message, k)) is not None}
        try:
            self.session.move_target(message.task, fields, message.ref)
        except ValidationError as exc:
            self._refuse("invalid", describe_validation(exc.errors())[0], message.ref)
        except PosekitError as exc:
            self._refuse(status_of(exc)[1], str(exc), message.ref)

    def _refuse(self, code: str, message: str, ref: Any) -> None:
        """Tell this client why its message was refused; its code to ``refused``."""
        self.subscription.offer_message(ErrorMessage(code=code, message=message, ref=ref))
        self.refused(code)


def _invalid(exc: ValidationError) -> str:
    """What is wrong with a client message pydantic refused, in words."""
    errors = exc.errors()
    kind = errors[0].get("type") if errors else None
    if kind == "json_invalid":
        return f"message is not valid JSON ({errors[0].get('msg', '')})"
    if kind in ("model_type", "model_attributes_type"):
        return "message must be a JSON object with a 'type' (target or ping)"
    return describe_validation(errors)[0]
