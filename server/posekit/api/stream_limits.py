"""Limits on what websocket clients may send: message size, message rate per client and
per credential."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StreamLimits:
    """Per-client websocket limits.

    Attributes:
        max_bytes: A larger client message is refused (an ``error`` reply, code
            ``too_large``); the connection stays open.
        rate: Client messages per second on average, with bursts of one second's
            worth; messages beyond are refused (an ``error`` reply, code
            ``rate_limited``). 0 means no limit.
        token_rate: The same, for all clients of one credential together
            (:mod:`~posekit.api.credential_budgets`); 0 means no shared limit.
    """

    max_bytes: int
    rate: float
    token_rate: float = 0.0
