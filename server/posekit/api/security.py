"""Access control: a shared token on every REST call, websocket and viewer page.

With a token configured, a request is let in when it carries it as
``Authorization: Bearer <token>``, as that cookie, or as ``?token=<token>``: a browser
link (``GET``) is then redirected (307) to the same URL without the token, setting an
HttpOnly, SameSite=Strict cookie (``Secure`` under https) so the token does not stay in
the browser's history and the page's own requests and websockets carry it; a websocket
may give it in its query; any other request (a change) may not (401: URLs end up in
proxies' logs). Everything else gets 401 (HTTP) or is closed with 4401
(websocket). ``/api/health`` stays open for health checks. Tokens are compared in
constant time.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlencode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

COOKIE = "posekit_token"
SERVER_TOKEN = "server-token"
"""The credential of a connection let in with the server's token."""
OPEN_PATHS = frozenset({"/api/health"})


class TokenAuth:
    """ASGI middleware requiring ``token`` on HTTP requests and websockets."""

    def __init__(
        self,
        app: ASGIApp,
        token: str,
        on_reject: Callable[[], None] | None = None,
        trust_forwarded_proto: bool = False,
    ) -> None:
        self.app = app
        self._token = token.encode()
        self._on_reject = on_reject
        self._trust_forwarded_proto = trust_forwarded_proto

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
            await self.app(_let_in(scope), receive, send)
            return
        detail = (
            "access token required: send 'Authorization: Bearer <token>' "
            "or open the link with ?token=<token>"
        )
        if self._matches(query_token):
            if scope["type"] == "websocket":
                await self.app(_let_in(scope), receive, send)
                return
            if scope.get("method") in ("GET", "HEAD"):
                await _redirect_with_cookie(
                    send, scope, query_token or "", self._secure(scope, headers)
                )
                return
            detail = (  # a URL's query ends up in proxies' logs: not for changes
                "the access token goes in the 'Authorization: Bearer <token>' header (or the "
                "cookie a link sets), not in the URL of a change"
            )
        if self._on_reject is not None:
            self._on_reject()
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 4401, "reason": "access token required"})
            return
        body = json.dumps({"detail": detail}).encode()
        await send({"type": "http.response.start", "status": 401, "headers": [
            (b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
            (b"content-length", str(len(body)).encode())]})  # fmt: skip
        await send({"type": "http.response.body", "body": body})

    def _secure(self, scope: Scope, headers: dict[str, str]) -> bool:
        """Whether the browser talks https (to us, or to a trusted proxy in front)."""
        if scope.get("scheme") == "https":
            return True
        forwarded = headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
        return self._trust_forwarded_proto and forwarded == "https"

    def _matches(self, candidate: str | None) -> bool:
        return candidate is not None and hmac.compare_digest(candidate.encode(), self._token)


def _let_in(scope: Scope) -> Scope:
    """``scope`` marked with the credential it came in with (``request.state.credential``:
    the server's token), for budgets shared by a credential's connections."""
    scope.setdefault("state", {})["credential"] = SERVER_TOKEN
    return scope


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


async def _redirect_with_cookie(send: Send, scope: Scope, token: str, secure: bool) -> None:
    """307 to the request's URL without ``token`` in its query, setting the token cookie."""
    query = [
        (key, value)
        for key, value in parse_qsl(scope.get("query_string", b"").decode("latin-1"), True)
        if key != "token"
    ]
    location = scope.get("root_path", "") + scope.get("path", "/")
    if query:
        location += "?" + urlencode(query)
    cookie = f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict" + ("; Secure" if secure else "")
    await send({"type": "http.response.start", "status": 307, "headers": [
        (b"location", location.encode("latin-1")), (b"set-cookie", cookie.encode()),
        (b"cache-control", b"no-store"), (b"content-length", b"0")]})  # fmt: skip
    await send({"type": "http.response.body", "body": b""})
