"""What the stream sends one client: ``hello``, then every update as it comes.

States are latest-wins (the subscription holds one), and awaiting each send is the flow
control: a client that reads slowly gets fewer, newer states, and the server holds at
most the transport's buffer and one pending state for it. A session solving faster than
its ``stream_hz`` is thinned to that rate (bursts of ``BURST``); a state answering a
change (a newer revision than the last one sent) is never held back.
"""

from __future__ import annotations

from fastapi import WebSocket

from posekit.api.stream_protocol import encode, hello_of
from posekit.api.token_bucket import TokenBucket
from posekit.sessions.live.error_message import ErrorMessage
from posekit.sessions.live.session import Session
from posekit.sessions.live.state import SessionState
from posekit.sessions.live.subscription import Subscription

BURST = 2.0
"""States a watcher may get back to back, beyond its ``stream_hz``."""


async def write_stream(
    websocket: WebSocket, session: Session, subscription: Subscription, binary: bool
) -> None:
    """Send ``hello``, then updates until the session ends; then an ``error`` with code
    ``session_closed`` and close code 4410."""
    hello = hello_of(session.summary(), session.tasks_snapshot(), session.state)
    await websocket.send_text(hello.model_dump_json())
    bucket = TokenBucket(session.solver.stream_hz, burst=BURST)
    sent_revision = session.revision
    async for update in subscription:
        for message in update.messages:
            await websocket.send_text(encode(message))
        state = update.state
        if state is None:
            continue
        state = await _paced(state, session, subscription, bucket, sent_revision)
        sent_revision = state.revision
        if binary:
            await websocket.send_bytes(state.binary())
        else:
            await websocket.send_text(state.json())
    reason = subscription.close_reason or "session closed"
    await websocket.send_text(ErrorMessage(code="session_closed", message=reason).model_dump_json())
    await websocket.close(code=4410, reason=reason[:100])


async def _paced(
    state: SessionState,
    session: Session,
    subscription: Subscription,
    bucket: TokenBucket,
    sent_revision: int,
) -> SessionState:
    """``state``, or a newer one that came while it waited for its token (module
    docstring); the token is taken."""
    solver = session.solver
    if solver.rate_hz <= solver.stream_hz:
        return state  # the solver is no faster than the stream: nothing to thin
    bucket.rate = solver.stream_hz
    while (wait := bucket.delay(0.0 if state.revision > sent_revision else 1.0)) > 0:
        if subscription.closed:
            break
        state = await subscription.newer_state(wait) or state
    bucket.take()
    return state
