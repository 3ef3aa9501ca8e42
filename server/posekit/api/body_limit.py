"""Request body size limit: larger bodies get a 413 before any route sees them."""

from __future__ import annotations

import json
from collections.abc import Mapping

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodySizeLimit:
    """Pure ASGI middleware refusing HTTP bodies over ``max_bytes`` with 413.

    ``routes`` gives other limits to some ``(method, path)`` (uploads). The
    ``Content-Length`` header is checked first; a body without one (chunked) is read up
    to the limit and replayed to the app only when it fits.
    """

    def __init__(
        self, app: ASGIApp, max_bytes: int, routes: Mapping[tuple[str, str], int] | None = None
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.routes = dict(routes or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.routes.get((scope.get("method", ""), scope.get("path", "")), self.max_bytes)
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None:
            try:
                too_large = int(length) > limit
            except ValueError:
                too_large = False
            if too_large:
                await self._refuse(send, int(length), limit)
                return
            await self.app(scope, receive, send)
            return
        body = bytearray()
        messages: list[Message] = []
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if len(body) > limit:
                await self._refuse(send, len(body), limit)
                return
            if not message.get("more_body", False):
                break
        replay = iter(messages)

        async def replay_receive() -> Message:
            return next(replay, None) or await receive()

        await self.app(scope, replay_receive, send)

    async def _refuse(self, send: Send, size: int, limit: int) -> None:
        payload = json.dumps(
            {
                "detail": f"request body of {size} bytes exceeds the limit of {limit} bytes",
                "code": "too_large",
            }
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})
