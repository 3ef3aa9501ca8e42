"""How the stream sends one watcher its states: latest wins, at most ``stream_hz`` a second
on average in bursts of two, a state answering a change never held back; each state's
bytes as the solver process encoded them.

The rate limit thins a solve faster than the stream. A session that solves no faster
(``rate_hz`` ≤ ``stream_hz``, the default 60 and 60) sends every state: its steps come
at most ``rate_hz`` a second on average, past the states answering a change, which are
never held back anyway. Its token bucket is not used then. With a bucket whose rate
equals the states' own rate, a state that came a little early waited for its token, and
so did every later one: the wait did not move the session's cadence, so the bucket never
filled again (95 % of the states of 100 sessions at 60 Hz went through the writer's
timed wait).

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
        need = self._need(revision)
        if need is not None and self.bucket.delay(need) > 0.0:
            return False
        if not send_now(self._payload(state), self._binary):
            return False
        if need is not None:
            self.bucket.take()
        self.revision = revision
        return True

    def _need(self, revision: int) -> float | None:
        """Tokens a state of ``revision`` needs: ``None`` when the session solves no
        faster than it streams (no limit, no token taken), 0 when it answers a change
        (taken ahead: the next regular state waits longer), else 1."""
        solver = self._session.solver
        stream_hz = solver.stream_hz
        if solver.rate_hz <= stream_hz:
            return None
        self.bucket.rate = stream_hz
        return 0.0 if revision > self.revision else 1.0

    async def send(self, state: SessionState, subscription: Subscription) -> None:
        """Send ``state``, or a newer one coming while it waits for a token."""
        self._credit.answered(state.revision)
        # Wait for a token; a state answering a change that arrives meanwhile goes at once.
        need = self._need(state.revision)
        while need is not None and (wait := self.bucket.delay(need)) > 0:
            if subscription.closed:
                break
            state = await subscription.newer_state(wait) or state
            need = self._need(state.revision)
        if need is not None:
            self.bucket.take()
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
