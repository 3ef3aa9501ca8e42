"""Limits on what one websocket client may send: message size and message rate."""

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
    """

    max_bytes: int
    rate: float
