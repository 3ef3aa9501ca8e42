"""How the stream sends one watcher its states: latest wins, at most ``stream_hz`` a second
on average in bursts of two, a state answering a change never held back; each state's
bytes as the solver process encoded them.

A state reaches a watcher on one of two roads, with the same rules:

- **at once** (:meth:`StateSender.offer`), on the event loop, from the signal that
  brought it (:meth:`~posekit.sessions.subscription.Subscription.deliver_to`): when
  the stream's writer waits with nothing else to send, a token is there (or the state
  answers a change) and the connection takes a frame without waiting
  (:data:`posekit.ws_protocol.SEND_NOW`), the state is written as one frame — its
  header, then its encoded bytes — with no task woken and no ASGI message built;
- **by the writer** (:meth:`StateSender.send`) in every other case: it waits for a
  token (a state answering a change arriving meanwhile goes at once), then sends
  through ASGI, which waits while the client does not read (the transport's flow
  control), so that a slow client never makes the server buffer more than the
  transport's high-water mark and the subscription's one pending state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import WebSocket

from posekit.api.target_credit import TargetCredit
from posekit.api.token_bucket import TokenBucket
from posekit.sessions.session import Session
from posekit.sessions.state import SessionState
from posekit.sessions.subscription import Subscription
from posekit.ws_protocol import SEND_NOW

BURST = 2.0
"""States a watcher may get back to back, beyond its ``stream_hz``."""


class StateSender:
    """The states of one stream client (module docstring).

    Args:
        websocket: The client's socket (accepted).
        session: Its session (read for ``stream_hz`` at each state).
        credit: The client's target credit, told of every state offered to it.
        binary: Whether states go as binary frames, else as JSON text.
    """

    def __init__(
        self, websocket: WebSocket, session: Session, credit: TargetCredit[Any], binary: bool
    ) -> None:
        self._websocket = websocket
        self._session = session
        self._credit = credit
        self._binary = binary
        self._payload: Callable[[SessionState], bytes] = (
            SessionState.binary if binary else SessionState.json_bytes
        )
        extensions = websocket.scope.get("extensions") or {}
        self._send_now: Callable[[bytes, bool], bool] | None = extensions.get(SEND_NOW)
        self.bucket = TokenBucket(session.solver.stream_hz, burst=BURST)
        self.revision = session.revision  # of the last state sent

    def offer(self, state: SessionState) -> bool:
        """Send ``state`` at once if it may go now without waiting; whether it went (if
        not, nothing was sent and the writer takes it)."""
        send_now = self._send_now
        if send_now is None:
            return False
        revision = state.revision
        self._credit.answered(revision)
        bucket = self.bucket
        bucket.rate = self._session.solver.stream_hz
        if bucket.delay(0.0 if revision > self.revision else 1.0) > 0.0:
            return False
        if not send_now(self._payload(state), self._binary):
            return False
        bucket.take()
        self.revision = revision
        return True

    async def send(self, state: SessionState, subscription: Subscription) -> None:
        """Send ``state``, or a newer one coming while it waits for a token."""
        self._credit.answered(state.revision)
        # Wait for a token; a state answering a change that arrives meanwhile goes at once.
        bucket = self.bucket
        bucket.rate = self._session.solver.stream_hz
        while (wait := bucket.delay(0.0 if state.revision > self.revision else 1.0)) > 0:
            if subscription.closed:
                break
            state = await subscription.newer_state(wait) or state
        bucket.take()
        self.revision = state.revision
        payload = self._payload(state)
        send_now = self._send_now
        if send_now is not None and send_now(payload, self._binary):
            return
        # ``send`` itself: what ``send_bytes``/``send_text`` do, one coroutine fewer a state.
        if self._binary:
            await self._websocket.send({"type": "websocket.send", "bytes": payload})
        else:
            await self._websocket.send({"type": "websocket.send", "text": payload.decode()})
