"""The one rate limiter: a token bucket.

Tokens flow in at ``rate`` per second up to ``burst``; an event spends one. ``rate = 0``
means no limit. Used for what a websocket client may send (refused beyond the rate, or
held back by the viewer relay) and for how often the stream sends a state.
"""

from __future__ import annotations

import time


class TokenBucket:
    """At most ``rate`` events per second on average, in bursts of at most ``burst``
    (default: one second's worth, at least 1). ``rate`` may be changed at any time."""

    def __init__(self, rate: float, burst: float | None = None) -> None:
        self.rate = rate
        self.burst = burst if burst is not None else max(rate, 1.0)
        self.tokens = self.burst
        self.stamp = time.monotonic()

    def delay(self, need: float = 1.0) -> float:
        """Seconds until ``need`` tokens are there (0: now); takes none. An urgent event
        may ask for 0, borrowing ahead so that the next regular event waits longer."""
        if self.rate <= 0:
            return 0.0
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        return 0.0 if self.tokens >= need else (need - self.tokens) / self.rate

    def take(self) -> None:
        """Spend a token (the bucket may go negative after an urgent event)."""
        if self.rate > 0:
            self.tokens -= 1.0

    def admit(self) -> bool:
        """Spend a token if one is there; whether the event may pass now."""
        if self.rate <= 0:
            return True
        now = time.monotonic()  # delay() and take() in one: this runs for every message
        tokens = self.tokens + (now - self.stamp) * self.rate
        self.stamp = now
        if tokens > self.burst:
            tokens = self.burst
        if tokens < 1.0:
            self.tokens = tokens
            return False
        self.tokens = tokens - 1.0
        return True
