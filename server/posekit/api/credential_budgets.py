"""What all websocket clients of one credential may send together: a token bucket per
credential (``POSEKIT_WS_TOKEN_RATE`` messages a second, bursts of one second's worth).

Each client has its own budget too (``POSEKIT_WS_RATE``); this one keeps many clients of
one credential — a script opening fifty sockets — from sending fifty budgets' worth.
The credential is what :class:`~posekit.api.security.TokenAuth` let the client in with
(the server's token), or ``open`` on a server without one.
"""

from __future__ import annotations

import threading

from posekit.api.token_bucket import TokenBucket

OPEN = "open"
"""The credential of every client of a server without a token."""


def credential_of(state: object) -> str:
    """The credential a connection was let in with (from its ASGI ``state``)."""
    credential = getattr(state, "credential", None)
    return credential if isinstance(credential, str) else OPEN


class CredentialBudgets:
    """One shared :class:`TokenBucket` per credential; ``rate`` 0: no shared budget."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self._buckets: dict[str, TokenBucket] = {}
        self._lock = threading.Lock()

    def bucket(self, credential: str) -> TokenBucket | None:
        """The credential's bucket (None without a shared budget)."""
        if self.rate <= 0:
            return None
        with self._lock:
            bucket = self._buckets.get(credential)
            if bucket is None:
                bucket = self._buckets[credential] = TokenBucket(self.rate)
            return bucket
