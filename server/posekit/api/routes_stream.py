"""``WS /api/sessions/{id}/stream``: live states out, target updates in.

Server → client (JSON objects with a ``type``):

- ``hello``: once, first: the session summary, task stack, limits, solver settings and
  the latest state.
- ``state``: solved states (see :class:`~posekit.api.protocol.StateMessage`), latest
  wins, at most ``stream_hz`` per second on average (bursts of two; the first state
  answering a change is never held back, the next regular one waits instead).
- ``tasks``: the task stack, limits and solver settings, after every change of them.
- ``reload``: the robot's files changed and its model was compiled again
  (:class:`~posekit.sessions.reload.reload_report.ReloadReport`: what was kept, dropped or
  reset; or ``status: "failed"`` and MuJoCo's message, the session keeping its model);
  followed by ``tasks`` and a state on the new model.
- ``error``: a client message was refused (``message`` says why, ``ref`` is the
  client's; ``code`` ``invalid``, ``not_found``, ``too_large`` or ``rate_limited``), or
  the session ended (``code`` ``session_closed``; the socket closes with 4410).
- ``pong``: the answer to ``ping``.

With ``?format=binary`` each ``state`` is a binary frame instead
(:mod:`posekit.sessions.live.state_frame`: a 48-byte header, q and the error norms as
float64, in the order of the latest ``tasks`` message's task names); every other
message stays a JSON text frame. An unknown format closes the socket with 4400.

Client → server: ``{"type": "target", "task": name, "position"|"wxyz"|"direction"|
"q"|"keyframe": …, "ref": any scalar}``, validated exactly like a REST PATCH of the
target (latest wins: a target the solver has not stepped yet is replaced by a newer one
of the same task); ``{"type": "ping", "ref": …}``. Each client may send messages of at
most ``StreamLimits.max_bytes`` at ``StreamLimits.rate`` per second (bursts of one
second's worth); beyond, the message is refused with an ``error`` and nothing changes,
and a client refused more than ten times its rate is cut off: an ``error`` ``flooding``
says why, its connection is no longer read (the kernel's buffers fill, and its sends
block) and is dropped after ``FLOODER_HOLD_S``. Not a close frame: uvicorn answers one by
reading and discarding the peer's frames until it replies, for up to 10 s, at whatever
speed the flooder sends (``bench/shared_server.py``: a bystander's p95 was 3.9 s beside 5
flooders closed with 1008, against 0.1 s held unread).

One reader (:mod:`posekit.api.stream_reader`) and one writer
(:mod:`posekit.api.stream_writer`) per client, on Starlette's ``WebSocket``.
"""

from __future__ import annotations

import asyncio
import contextlib

from fastapi import APIRouter, WebSocket
from starlette.websockets import WebSocketDisconnect

from posekit.api.credential_budgets import CredentialBudgets, credential_of
from posekit.api.deps import manager_of
from posekit.api.errors import response_of, status_of
from posekit.api.stream_limits import StreamLimits
from posekit.api.stream_reader import ClientMessages, Flooding
from posekit.api.stream_writer import write_stream
from posekit.ik.exceptions import PosekitError
from posekit.sessions.errors import DatabaseUnavailable, NotOwner, SessionNotFound
from posekit.sessions.live.error_message import ErrorMessage

router = APIRouter()

FLOODER_HOLD_S = 10.0
"""[s] a flooding client's connection is held unread this long, then dropped (module
docstring)."""


@router.websocket("/api/sessions/{session_id}/stream")
async def stream(websocket: WebSocket, session_id: str) -> None:
    """The session's live stream (protocol in the module docstring).

    In a cluster, a session another replica solves is refused *before* the upgrade, with
    the HTTP answer of :class:`NotOwner` (503 ``not_owner``), so that a proxy sends the
    upgrade on to another replica."""
    failure: PosekitError | None = None
    try:
        session = await asyncio.to_thread(manager_of(websocket).get, session_id)
    except (NotOwner, DatabaseUnavailable) as exc:
        await websocket.send_denial_response(response_of(exc))
        return
    except PosekitError as exc:
        failure = exc
    await websocket.accept()
    encoding = websocket.query_params.get("format", "json")
    if encoding not in ("json", "binary"):
        unknown = f"unknown format {encoding!r}; use json (the default) or binary"
        await websocket.send_text(ErrorMessage(code="invalid", message=unknown).model_dump_json())
        await websocket.close(code=4400, reason="unknown format")
        return
    if isinstance(failure, SessionNotFound):
        await websocket.send_text(
            ErrorMessage(code="not_found", message=str(failure)).model_dump_json()
        )
        await websocket.close(code=4404, reason="session not found")
        return
    if failure is not None:  # e.g. reviving it would exceed the session limit
        await websocket.send_text(
            ErrorMessage(code=status_of(failure)[1], message=str(failure)).model_dump_json()
        )
        await websocket.close(code=4429, reason="session unavailable")
        return
    limits: StreamLimits = websocket.app.state.stream_limits
    metrics = websocket.app.state.metrics
    binary = encoding == "binary"
    subscription = session.subscribe(initial_state=False)

    def refused(code: str) -> None:
        if metrics is not None:
            metrics.count_ws_refusal(code)

    budgets: CredentialBudgets = websocket.app.state.credential_budgets
    shared = budgets.bucket(credential_of(websocket.state))
    reader = ClientMessages(session, subscription, limits, refused, shared)
    writer = asyncio.create_task(write_stream(websocket, session, subscription, binary))
    try:
        while True:  # ends when the client leaves, or after the writer closed the socket
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            raw = message.get("text")
            reader.take(raw if raw is not None else message.get("bytes") or b"")
    except Flooding as flood:
        writer.cancel()
        with contextlib.suppress(Exception):
            await websocket.send_text(
                ErrorMessage(code="flooding", message=str(flood)).model_dump_json()
            )
            await asyncio.sleep(FLOODER_HOLD_S)  # unread: its sends block, costing no one
    except (WebSocketDisconnect, RuntimeError):
        return
    finally:
        subscription.close()
        writer.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await writer
