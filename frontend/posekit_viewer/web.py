"""The browser-facing routes: landing page, icon, static files, viewer page and its relay.

``GET /viewer/{sid}`` serves viser's single-file client; the client opens a websocket
on the same path, which is relayed byte for byte (with viser's ``viser-v…``
subprotocol) to that session's own viser server on 127.0.0.1. Browsers therefore
need a single external port. Frames from a browser faster than the per-client
websocket rate (``app.state.stream_limits``) are held back, never dropped (viser's
protocol cannot lose messages): a flooding client slows only itself. In a cluster, both
answer 503 ``not_owner`` when another replica solves the session (the websocket before
its upgrade), so that the proxy tries another replica.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.resources
import logging
from pathlib import Path

import viser
import websockets
from fastapi import APIRouter, HTTPException, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles
from posekit.api.errors import response_of
from posekit.api.stream_limits import StreamLimits
from posekit.api.token_bucket import TokenBucket
from posekit.ik.exceptions import PosekitError
from posekit.sessions.errors import DatabaseUnavailable, NotOwner, SessionNotFound
from posekit.sessions.manager import SessionManager
from websockets.asyncio.client import connect
from websockets.typing import Subprotocol

from posekit_viewer.hub import ViewerHub

logger = logging.getLogger(__name__)

STATIC_DIR = Path(str(importlib.resources.files("posekit_viewer.static")))
VISER_CLIENT = Path(viser.__file__).parent / "client" / "build" / "index.html"
RELAY_MAX_BYTES = 64 * 1024 * 1024  # scene uploads (meshes) can be large


def static_files() -> StaticFiles:
    """The landing page's files (``posekit_viewer.static``), to mount at ``/static``."""
    return StaticFiles(directory=STATIC_DIR)


def viewer_router(manager: SessionManager, hub: ViewerHub) -> APIRouter:
    """Routes for ``/`` and ``/viewer/{sid}`` (page + websocket relay); the landing
    page's files are :func:`static_files`, mounted at ``/static``."""
    router = APIRouter(include_in_schema=False)
    client_page = VISER_CLIENT.read_text(encoding="utf-8")

    @router.get("/")
    def landing_page() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html")

    @router.get("/favicon.ico")
    def favicon() -> FileResponse:
        """The app's icon (SVG, which browsers take at this address too)."""
        return FileResponse(STATIC_DIR / "favicon.svg", media_type="image/svg+xml")

    @router.get("/viewer/{session_id}")
    def viewer_page(session_id: str) -> HTMLResponse:
        try:
            manager.get(session_id)
        except SessionNotFound as error:
            raise HTTPException(status_code=404, detail=str(error)) from None
        return HTMLResponse(client_page)

    @router.websocket("/viewer/{session_id}")
    async def viewer_socket(websocket: WebSocket, session_id: str) -> None:
        link = str(
            websocket.url.replace(
                scheme="https" if websocket.url.scheme == "wss" else "http", query=""
            )
        )
        requested = websocket.scope.get("subprotocols", [])
        protocol = next((p for p in requested if p.startswith("viser-v")), None)
        try:
            viewer = await asyncio.to_thread(hub.viewer, session_id, link)
        except (NotOwner, DatabaseUnavailable) as error:  # before the upgrade: proxies retry
            await websocket.send_denial_response(response_of(error))
            return
        except PosekitError as error:  # unknown, or reviving it would exceed the limit
            code = 4404 if isinstance(error, SessionNotFound) else 4429
            await websocket.accept(subprotocol=protocol)  # so that the close code arrives
            await websocket.close(code=code, reason=str(error)[:120])
            return
        await websocket.accept(subprotocol=protocol)
        limits: StreamLimits = websocket.app.state.stream_limits
        await relay(websocket, viewer.url, protocol, TokenBucket(limits.rate))

    return router


async def relay(
    browser: WebSocket, url: str, protocol: str | None, gate: TokenBucket | None = None
) -> None:
    """Pump frames both ways between the browser and the viser server until either
    closes; browser frames wait for ``gate`` (rate backpressure) when one is given."""
    try:
        upstream = await connect(
            url,
            subprotocols=[Subprotocol(protocol)] if protocol else None,
            max_size=RELAY_MAX_BYTES,
            compression=None,
            proxy=None,  # loopback: never through a proxy of the environment
        )
    except (OSError, websockets.WebSocketException) as error:
        logger.warning("viewer relay could not reach viser at %s: %s", url, error)
        await browser.close(code=1011, reason="viewer unavailable")
        return

    async def browser_to_viser() -> None:
        while True:
            message = await browser.receive()
            if message["type"] == "websocket.disconnect":
                return
            if gate is not None:
                while (wait := gate.delay()) > 0.0:
                    await asyncio.sleep(wait)
                gate.take()
            data = message.get("bytes")
            await upstream.send(data if data is not None else message.get("text", ""))

    async def viser_to_browser() -> None:
        async for data in upstream:
            if isinstance(data, bytes):
                await browser.send_bytes(data)
            else:
                await browser.send_text(data)

    tasks = [asyncio.create_task(browser_to_viser()), asyncio.create_task(viser_to_browser())]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, WebSocketDisconnect, Exception):
                await task
        await upstream.close()
        with contextlib.suppress(RuntimeError, WebSocketDisconnect):
            await browser.close()
