"""Websockets and changes from other sites are refused: a browser's websocket, and its
``POST``/``PUT``/``PATCH``/``DELETE``, carry their page's ``Origin``; it must be this
server itself (same host and port as the ``Host`` the browser connected to) or one of
the CORS origins. Clients without an ``Origin`` (not browsers) pass: the token guards
them. Refused sockets are closed with 4403, refused requests answered 403, before the
app sees them (cross-site websocket hijacking; cross-site form posts, such as an upload
to a server on loopback without a token: a multipart form is a request browsers send
without asking CORS first)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from urllib.parse import urlsplit

from posekit.api.security import ASGIApp, Receive, Scope, Send

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class WebSocketOriginCheck:
    """ASGI middleware: same-origin (or CORS-listed) websockets and changes only."""

    def __init__(self, app: ASGIApp, allowed_origins: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed = {origin.rstrip("/").lower() for origin in allowed_origins}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and not self._allowed(scope):
            await send({"type": "websocket.close", "code": 4403, "reason": "origin not allowed"})
            return
        if (
            scope["type"] == "http"
            and scope.get("method") in UNSAFE_METHODS
            and not self._allowed(scope)
        ):
            await self._refuse(send)
            return
        await self.app(scope, receive, send)

    @staticmethod
    async def _refuse(send: Send) -> None:
        body = json.dumps(
            {
                "detail": "cross-site request refused: its Origin is not this server",
                "code": "forbidden",
            }
        ).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ]
        await send({"type": "http.response.start", "status": 403, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def _allowed(self, scope: Scope) -> bool:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        origin = headers.get("origin")
        if origin is None:
            return True
        origin = origin.rstrip("/").lower()
        if "*" in self.allowed or origin in self.allowed:
            return True
        return urlsplit(origin).netloc == headers.get("host", "").lower()
