"""Limits on what one websocket client may send: message size and message rate."""

from __future__ import annotations

import time
from dataclasses import dataclass

DEFAULT_WS_MAX_BYTES = 64 * 1024
DEFAULT_WS_RATE = 120.0  # messages per second: two 60 Hz drags at once


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

    max_bytes: int = DEFAULT_WS_MAX_BYTES
    rate: float = DEFAULT_WS_RATE


class RateGate:
    """A token bucket for one client: at most ``rate`` events per second on average,
    bursts of ``max(rate, 1)`` events. ``rate = 0`` lets everything through."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.capacity = max(rate, 1.0)
        self.tokens = self.capacity
        self.stamp = time.monotonic()

    def wait_time(self) -> float:
        """Seconds until one event may pass (0 when it may pass now); takes no token."""
        if self.rate <= 0:
            return 0.0
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        return 0.0 if self.tokens >= 1.0 else (1.0 - self.tokens) / self.rate

    def admit(self) -> bool:
        """Take a token if one is there; whether the event may pass."""
        if self.wait_time() > 0.0:
            return False
        if self.rate > 0:
            self.tokens -= 1.0
        return True
