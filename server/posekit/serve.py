"""Serving the app with uvicorn: ``posekit up``, the tests' servers and the benches.

Needs the ``server`` extra (``pip install 'posekit[server]'``).
"""

from __future__ import annotations

import asyncio
import socket
from typing import TYPE_CHECKING, Any

import uvicorn
from fastapi import FastAPI

from posekit.listener import PortInUse, bind_listener
from posekit.settings import Settings

if TYPE_CHECKING:
    from posekit.api.app import Hook

# Websocket frames above this close the connection (1009) at the transport; the API
# stream refuses smaller messages above POSEKIT_WS_MAX_BYTES with an error reply.
WS_TRANSPORT_MAX_BYTES = 1 << 20


def first_session(robot_name: str | None, announce: str | None = None) -> Hook:
    """A startup hook: when the server has no session (none restored from its database;
    in a cluster, none in the database),
    create one on ``robot_name`` (None: none), or on the robot file the server was given
    (``posekit up FILE``); print the sessions' links under ``announce`` (a base URL), if
    given."""

    async def create_first(app: FastAPI) -> None:
        manager = app.state.manager
        own_robots = getattr(app.state, "own_robots", None)
        served = own_robots.served if own_robots is not None else None
        robot = (served or robot_name) if robot_name is not None else None
        sessions = [info.id for info in manager.listing()]  # a cluster's: all replicas'
        if not sessions and robot is not None:
            session = await asyncio.to_thread(manager.create, {"robot": robot})
            sessions = [session.id]
            if announce:
                print(f"posekit: session {session.id} on {robot}", flush=True)
        elif sessions and announce:
            print(f"posekit: {len(sessions)} session(s) restored", flush=True)
        if announce:
            for session_id in sessions[:5]:
                print(
                    f"  viewer  {announce}/viewer/{session_id}\n"
                    f"  state   {announce}/api/sessions/{session_id}\n"
                    f"  stream  {announce.replace('http', 'ws', 1)}/api/sessions/{session_id}/stream",
                    flush=True,
                )

    return create_first


def uvicorn_config(
    app: FastAPI,
    settings: Settings,
    ws: str | None = None,
    **options: Any,
) -> uvicorn.Config:
    """How uvicorn serves the app (``posekit up``, the tests' servers, the benches):
    websocket frames up to :data:`WS_TRANSPORT_MAX_BYTES` (or the settings' larger
    limit), no compression, the app's own logging. ``ws``: uvicorn's websocket
    implementation (its own choice by default). ``options``: other ``uvicorn.Config``
    arguments, e.g. a test server's own logging."""
    ours: dict[str, Any] = {
        "ws": ws or "auto",
        "ws_max_size": max(WS_TRANSPORT_MAX_BYTES, settings.ws_max_bytes),
        # States are a few hundred bytes; compressing each one cost more server CPU
        # than everything else per message on the load bench, so deflate is off.
        "ws_per_message_deflate": False,
        "log_config": None,  # the app's configure_logging formats uvicorn's lines too
        "log_level": None,
        "access_log": False,  # the app logs each request itself, with its request id
    }
    return uvicorn.Config(app, **(ours | options))


def serve(
    host: str | None,
    port: int | None,
    robot: str | None,
    robot_file: str | None = None,
    robots_dir: str | None = None,
    log_level: str | None = None,
) -> None:
    """Run the app with uvicorn until interrupted (host, port, log level, robot file and
    folder default to the ``POSEKIT_HOST`` / ``POSEKIT_PORT`` / ``POSEKIT_LOG_LEVEL`` /
    ``POSEKIT_ROBOT_FILE`` / ``POSEKIT_ROBOTS_DIR`` settings). The port is bound first: a
    busy one ends the command before anything is announced."""
    from posekit.app import create_app
    from posekit.memory import limit_malloc_arenas

    limit_malloc_arenas()
    settings = Settings.from_env()
    given = {"robot_file": robot_file, "robots_dir": robots_dir, "log_level": log_level}
    settings = settings.model_copy(update={k: v for k, v in given.items() if v})
    host = host or settings.host
    port = port or settings.port
    listener = _bind(host, port)
    shown_host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    url = f"http://{shown_host}:{port}"
    print(f"posekit: serving on {url}  (API docs: {url}/docs)", flush=True)
    config = uvicorn_config(create_app(settings, on_startup=[first_session(robot, url)]), settings)
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[listener])
    except KeyboardInterrupt:  # Ctrl-C: uvicorn has shut the app down
        pass
    if not server.started:
        raise SystemExit(3)  # the app failed to start; its error is in the log


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket; a busy port or a bad address ends the command with why."""
    try:
        return bind_listener(host, port)
    except PortInUse:
        raise SystemExit(f"posekit: port {port} is in use; use --port or POSEKIT_PORT") from None
    except OSError as error:
        raise SystemExit(f"posekit: cannot listen on {host}:{port}: {error.strerror}") from None
