"""Viser servers that listen on Unix-domain sockets in a private directory.

A viser server listens on a TCP port of its own, which any local user or process could
reach without the app's token. Here each one listens on a Unix-domain socket instead,
in a directory created for this process with mode 0700 (only the server's user can even
reach the socket), and the app's relay — behind the token — is its only client.

viser 1.1 (pinned below 1.2) has no option for this: it starts its websocket server with
``websockets.asyncio.server.serve(handler, host, port, …)``, called on its own thread
while :class:`viser.ViserServer` is being constructed (the constructor returns once it
listens). :func:`start_private_viser` swaps that function for ``unix_serve`` on the
socket's path for exactly that construction, under a lock.
"""

from __future__ import annotations

import os
import secrets
import tempfile
import threading
from collections.abc import Callable
from typing import Any

import viser
import websockets.asyncio.server as websockets_server

from posekit_viewer.quiet_viser import route_viser_output

_START_LOCK = threading.Lock()
_directory: str | None = None


def private_directory() -> str:
    """This process's directory of viewer sockets (mode 0700), created on first use."""
    global _directory
    with _START_LOCK:
        if _directory is None or not os.path.isdir(_directory):
            _directory = tempfile.mkdtemp(prefix="posekit-viewers-")  # 0700 by mkdtemp
        return _directory


def start_private_viser() -> tuple[viser.ViserServer, str]:
    """A started, quiet viser server on a new Unix-domain socket; returns it and the
    socket's path (give it to :func:`websockets.asyncio.client.unix_connect`). viser's
    console output goes to the ``viser`` logger (:mod:`posekit_viewer.quiet_viser`)."""
    route_viser_output()
    path = os.path.join(private_directory(), f"{secrets.token_hex(8)}.sock")
    tcp_serve: Callable[..., Any] = websockets_server.serve

    def unix_serve(handler: Any, host: str, port: int, **options: Any) -> Any:
        return tcp_serve(handler, unix=True, path=path, **options)  # what unix_serve does

    with _START_LOCK:
        websockets_server.serve = unix_serve  # type: ignore[misc, assignment]
        try:
            server = viser.ViserServer(host="127.0.0.1", port=0, verbose=False)
        finally:
            websockets_server.serve = tcp_serve  # type: ignore[misc, assignment]
    os.chmod(path, 0o600)
    return server, path
