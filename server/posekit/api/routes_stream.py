"""``WS /api/sessions/{id}/stream``: live states out, target updates in.

Server → client (JSON objects with a ``type``):

- ``hello``: once, first: the session summary, task stack, limits, solver settings and
  the latest state.
- ``state``: solved states (see :class:`~posekit.api.protocol.StateMessage`), latest
  wins, at most ``stream_hz`` per second on average (bursts of two; the first state
  answering a change is never held back, the next regular one waits instead).
- ``tasks``: the task stack, limits and solver settings, after every change of them.
- ``reload``: the robot's files changed and its model was compiled again
  (:class:`~posekit.sessions.reload_report.ReloadReport`: what was kept, dropped or
  reset; or ``status: "failed"`` and MuJoCo's message, the session keeping its model);
  followed by ``tasks`` and a state on the new model.
- ``error``: a client message was refused (``message`` says why, ``ref`` is the
  client's; ``code`` ``invalid``, ``not_found``, ``too_large`` or ``rate_limited``), or
  the session ended (``code`` ``session_closed``; the socket closes with 4410).
- ``pong``: the answer to ``ping``.

With ``?format=binary`` each ``state`` is a binary frame instead
(:mod:`posekit.sessions.state_frame`: a 48-byte header, q and the error norms as
float64, in the order of the latest ``tasks`` message's task names); every other
message stays a JSON text frame. An unknown format closes the socket with 4400.

Client → server: ``{"type": "target", "task": name, "position"|"wxyz"|"direction"|
"q"|"keyframe": …, "ref": any scalar}``, validated exactly like a REST PATCH of the
target; ``{"type": "ping", "ref": …}``. A client has one target in flight: a target sent
before the state answering its previous one waits for it, and a newer target of the
same task replaces it (:mod:`posekit.api.target_credit`). Each client may send messages
of at most ``StreamLimits.max_bytes`` at ``StreamLimits.rate`` per second (bursts of one
second's worth); beyond, the message is refused with an ``error`` and nothing changes.

Served by ``posekit up``, a client's messages are taken as the socket is read
(:data:`posekit.ws_protocol.RECEIVE_NOW`), without an ASGI event or a task switch each,
and settled once per read; an eager client's socket is not read while its target is in
flight (:data:`posekit.ws_protocol.HOLD_READS`): what it sent meanwhile is read in one go
when the answer comes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from fastapi import APIRouter, WebSocket
from pydantic import ValidationError
from starlette.websockets import WebSocketDisconnect

from posekit.api.deps import manager_of
from posekit.api.errors import describe_validation, response_of, status_of
from posekit.api.plain_target import plain_target
from posekit.api.state_sender import StateSender
from posekit.api.stream_limits import StreamLimits
from posekit.api.stream_protocol import (
    CLIENT_MESSAGE,
    ErrorMessage,
    PingMessage,
    PongMessage,
    encode,
    hello_of,
)
from posekit.api.target_credit import Apply, TargetCredit
from posekit.api.token_bucket import TokenBucket
from posekit.ik.exceptions import PosekitError
from posekit.sessions.errors import DatabaseUnavailable, NotOwner, SessionNotFound
from posekit.sessions.kinds.target import TARGET_FIELDS
from posekit.sessions.session import Session
from posekit.sessions.subscription import Subscription
from posekit.ws_protocol import HOLD_READS, RECEIVE_NOW, Done, Take

logger = logging.getLogger(__name__)

TargetFields = Mapping[str, Any]
"""A target's given fields by name, checked against the message schema; the target is
built from them only when it is applied (a replaced one never is)."""
router = APIRouter()


def _ref_of(raw: str | bytes) -> Any:
    """The client's ``ref`` of a refused message, when it can be read at all."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    ref = data.get("ref") if isinstance(data, dict) else None
    return ref if isinstance(ref, (str, int, float, bool)) and len(str(ref)) <= 128 else None


class ClientMessages:
    """Takes one client's messages (:meth:`take`, called once per message): a target goes
    to the client's ``credit`` (applied now or when the previous one is answered);
    refusals go back to this client only, and their code to ``refused``."""

    def __init__(
        self,
        subscription: Subscription,
        limits: StreamLimits,
        gate: TokenBucket,
        credit: TargetCredit[TargetFields],
        refused: Callable[[str], None],
    ) -> None:
        self.subscription = subscription
        self.limits = limits
        self.gate = gate
        self.credit = credit
        self.refused = refused

    def take(self, raw: str | bytes) -> None:
        """Take one client message (a common target's whole road here is this call, the
        parse and the credit's)."""
        limits = self.limits
        size = len(raw)
        if size > limits.max_bytes:
            text = f"message of {size} bytes exceeds the limit of {limits.max_bytes} bytes"
            self._refuse("too_large", text, None)
            return
        if not self.gate.admit():
            text = (
                f"more than {limits.rate:g} messages per second from this client; "
                "this message was dropped (send the latest target only)"
            )
            self._refuse("rate_limited", text, _ref_of(raw))
            return
        plain = plain_target(raw)
        if plain is not None:  # the common form, read without pydantic (the same values)
            task, fields, ref = plain
            self.credit.offer(task, fields, ref)
            return
        self._validated(raw)

    def _validated(self, raw: str | bytes) -> None:
        """:meth:`take` of a message not in the common form: checked by pydantic."""
        try:
            message = CLIENT_MESSAGE.validate_json(raw)
        except ValidationError as exc:
            errors = exc.errors()
            if errors and errors[0].get("type") == "json_invalid":
                detail = f"message is not valid JSON ({errors[0].get('msg', '')})"
            elif errors and errors[0].get("type") in ("model_type", "model_attributes_type"):
                detail = "message must be a JSON object with a 'type' (target or ping)"
            else:
                detail, _ = describe_validation(errors)
            self._refuse("invalid", detail, _ref_of(raw))
            return
        if isinstance(message, PingMessage):
            self.subscription.offer_message(PongMessage(ref=message.ref, time=time.time()))
            return
        fields = {k: v for k in TARGET_FIELDS if (v := getattr(message, k)) is not None}
        self.credit.offer(message.task, fields, message.ref)

    def _refuse(self, code: str, message: str, ref: Any) -> None:
        """Tell this client why its message was refused; its code to ``refused``."""
        self.subscription.offer_message(ErrorMessage(code=code, message=message, ref=ref))
        self.refused(code)


def target_applier(
    session: Session, subscription: Subscription, refused: Callable[[str], None]
) -> Apply[TargetFields]:
    """Applies a client's target to ``session``; a refusal goes back to this client
    (an ``error`` with the target's ``ref``) and to ``refused`` (its code)."""

    def apply(task: str, fields: TargetFields, ref: Any) -> bool:
        try:
            session.move_target(task, fields, ref)
            return True
        except (ValidationError, PosekitError) as exc:
            if isinstance(exc, ValidationError):
                code, detail = "invalid", describe_validation(exc.errors())[0]
            else:
                code, detail = status_of(exc)[1], str(exc)
            subscription.offer_message(ErrorMessage(code=code, message=detail, ref=ref))
            refused(code)
            return False

    return apply


async def _write(
    websocket: WebSocket,
    session: Session,
    subscription: Subscription,
    credit: TargetCredit[TargetFields],
) -> None:
    """Send hello, then updates as they come; states by :class:`StateSender` (latest
    wins, rate-limited, already encoded by the solver process; those that may go at
    once are sent from the signal that brought them, without waking this task)."""
    hello = hello_of(session.summary(), session.tasks_snapshot(), session.state)
    await websocket.send_text(hello.model_dump_json())
    sender = StateSender(websocket, session, credit, binary=subscription.encoding == "binary")
    subscription.deliver_to(sender.offer)
    try:
        async for update in subscription:
            for message in update.messages:
                await websocket.send_text(encode(message))
            if update.state is not None:
                await sender.send(update.state, subscription)
    finally:
        subscription.deliver_to(None)
    reason = subscription.close_reason or "session closed"
    await websocket.send_text(ErrorMessage(code="session_closed", message=reason).model_dump_json())
    await websocket.close(code=4410, reason=reason[:100])


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
    gate = TokenBucket(limits.rate)
    metrics = websocket.app.state.metrics
    subscription = session.subscribe(
        initial_state=False, encoding="binary" if encoding == "binary" else "json"
    )

    def refused(code: str) -> None:
        if metrics is not None:
            metrics.count_ws_refusal(code)

    extensions = websocket.scope.get("extensions") or {}
    receive_now: Callable[[Take | None, Done | None], None] | None = extensions.get(RECEIVE_NOW)
    credit = TargetCredit(
        target_applier(session, subscription, refused),
        lambda: session.revision,
        period=session.step_period,
        # Reads are held only where a read's messages are taken from it (then settled).
        hold=extensions.get(HOLD_READS) if receive_now is not None else None,
    )
    take = ClientMessages(subscription, limits, gate, credit, refused).take
    if receive_now is not None:  # messages are taken as they are read (posekit up)
        receive_now(take, credit.settle)
    writer = asyncio.create_task(_write(websocket, session, subscription, credit))
    try:
        while True:  # ends when the client leaves, or after the writer closed the socket
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            raw = message.get("text")
            take(raw if raw is not None else message.get("bytes") or b"")
            credit.settle()
    except (WebSocketDisconnect, RuntimeError):
        return
    finally:
        if receive_now is not None:
            receive_now(None, None)
        credit.close()
        subscription.close()
        writer.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await writer
