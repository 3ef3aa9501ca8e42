"""Access control: a shared token on every REST call, websocket and viewer page.

With a token configured, a request is let in when it carries it as
``Authorization: Bearer <token>``, as ``?token=<token>`` (a browser link: the response
then sets an HttpOnly cookie so the page's own requests and websockets carry it), or
as that cookie. Everything else gets 401 (HTTP) or has its websocket handshake refused
(HTTP 403, before any message is exchanged). ``/api/health`` stays open for health checks.
Tokens are compared in constant time.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

COOKIE = "posekit_token"
OPEN_PATHS = frozenset({"/api/health"})


class TokenAuth:
    """ASGI middleware requiring ``token`` on HTTP requests and websockets."""

    def __init__(
        self, app: ASGIApp, token: str, on_reject: Callable[[], None] | None = None
    ) -> None:
        self.app = app
        self._token = token.encode()
        self._on_reject = on_reject

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope.get("path") in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        headers = {key.decode("latin-1").lower(): value.decode("latin-1")
                   for key, value in scope.get("headers", [])}  # fmt: skip
        query_token = parse_qs(scope.get("query_string", b"").decode("latin-1")).get(
            "token", [None]
        )[0]
        if self._matches(_bearer(headers)) or self._matches(_cookie(headers)):
            await self.app(scope, receive, send)
            return
        if self._matches(query_token):
            await self.app(scope, receive, _with_cookie(send, query_token or ""))
            return
        if self._on_reject is not None:
            self._on_reject()
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 4401, "reason": "access token required"})
            return
        body = json.dumps(
            {
                "detail": "access token required: send 'Authorization: Bearer <token>' "
                "or open the link with ?token=<token>"
            }
        ).encode()
        await send({"type": "http.response.start", "status": 401, "headers": [
            (b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
            (b"content-length", str(len(body)).encode())]})  # fmt: skip
        await send({"type": "http.response.body", "body": body})

    def _matches(self, candidate: str | None) -> bool:
        return candidate is not None and hmac.compare_digest(candidate.encode(), self._token)


def _bearer(headers: dict[str, str]) -> str | None:
    value = headers.get("authorization", "")
    scheme, _, credential = value.partition(" ")
    return credential.strip() if scheme.lower() == "bearer" and credential else None


def _cookie(headers: dict[str, str]) -> str | None:
    raw = headers.get("cookie")
    if not raw:
        return None
    jar = SimpleCookie()
    try:
        jar.load(raw)
    except Exception:  # a malformed cookie header is just no cookie
        return None
    morsel = jar.get(COOKIE)
    return morsel.value if morsel is not None else None


def _with_cookie(send: Send, token: str) -> Send:
    """Wrap ``send`` so an HTTP response also sets the token cookie."""
    cookie = f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict".encode()

    async def send_with_cookie(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = dict(message)
            message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie)]
        await send(message)

    return send_with_cookie
