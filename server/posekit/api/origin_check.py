"""Websockets from other sites are refused: a browser's websocket carries its page's
``Origin``; it must be this server itself (same host and port as the ``Host`` the
browser connected to) or one of the CORS origins. Clients without an ``Origin`` (not
browsers) pass: the token guards them. Refused sockets are closed with 4403 before the
app sees them (cross-site websocket hijacking)."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from posekit.api.security import ASGIApp, Receive, Scope, Send


class WebSocketOriginCheck:
    """ASGI middleware: same-origin (or CORS-listed) websockets only."""

    def __init__(self, app: ASGIApp, allowed_origins: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed = {origin.rstrip("/").lower() for origin in allowed_origins}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and not self._allowed(scope):
            await send({"type": "websocket.close", "code": 4403, "reason": "origin not allowed"})
            return
        await self.app(scope, receive, send)

    def _allowed(self, scope: Scope) -> bool:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        origin = headers.get("origin")
        if origin is None:
            return True
        origin = origin.rstrip("/").lower()
        if "*" in self.allowed or origin in self.allowed:
            return True
        return urlsplit(origin).netloc == headers.get("host", "").lower()
