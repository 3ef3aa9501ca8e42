"""The FastAPI app factory (the API's composition point).

``create_app()`` wires the session manager, the error mapping, the body size limit and
the routes. Other parts of posekit (the viewer) plug in with ``routers`` (included
before the API's own routes, so they may also serve ``/``) and with ``on_startup`` /
``on_shutdown`` hooks that receive the app (``app.state.manager`` is the
:class:`SessionManager`).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager

from fastapi import APIRouter, FastAPI
from fastapi.responses import RedirectResponse

import posekit
from posekit.api import routes_robots, routes_sessions, routes_stream, routes_tasks
from posekit.api.body_limit import DEFAULT_MAX_BODY_BYTES, BodySizeLimit
from posekit.api.errors import install_error_handlers
from posekit.api.stream_limits import StreamLimits
from posekit.robots import RobotRegistry
from posekit.sessions.manager import SessionManager
from posekit.sessions.store import SessionStore

Hook = Callable[[FastAPI], Awaitable[None] | None]

DESCRIPTION = """
Live, task-based differential inverse kinematics for MuJoCo robots.

A **session** holds a robot configuration, a task stack (frame, relative frame, CoM,
look-at, axis-align, equality, DoF freezing, posture, damping, kinetic energy),
limits (joint ranges, speeds, collision avoidance) and solver settings, and solves
continuously in the background. Change tasks, weights, targets and limits over REST
while it runs, and watch solved joint states on the websocket
`/api/sessions/{id}/stream` (messages `hello`, `state`, `tasks`, `error`; send
`{"type": "target", "task": …, "position": […]}` to drag a target).

Errors are JSON `{"detail", "code", "errors"}` with 404 (unknown session, task, limit,
robot), 409 (name taken, or the session holds its maximum number of tasks), 413 (body
too large), 422 (invalid input: the message names the bad value and what is valid),
429 (the server runs its maximum number of sessions).
"""

TAGS = [
    {"name": "meta", "description": "Health."},
    {"name": "robots", "description": "Built-in robots and MuJoCo Menagerie."},
    {"name": "sessions", "description": "Create, inspect, export and delete sessions."},
    {"name": "tasks", "description": "The task stack of a session, live."},
    {"name": "limits", "description": "The limits of a session, live."},
]


def create_app(
    manager: SessionManager | None = None,
    *,
    registry: RobotRegistry | None = None,
    store: SessionStore | None = None,
    routers: Sequence[APIRouter] = (),
    on_startup: Sequence[Hook] = (),
    on_shutdown: Sequence[Hook] = (),
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    stream_limits: StreamLimits | None = None,
) -> FastAPI:
    """The posekit web app.

    Args:
        manager: Session manager to serve; a new one (from ``registry`` and ``store``)
            by default. It is started with the app and shut down with it.
        registry: Robot registry for a new manager.
        store: Persistence hook for a new manager.
        routers: Extra routers (e.g. the viewer), included before the API routes.
        on_startup: Called with the app after the manager started.
        on_shutdown: Called with the app before the manager shuts down.
        max_body_bytes: Larger request bodies get 413.
        stream_limits: Size and rate of a websocket client's messages.
    """
    if manager is None:
        manager = SessionManager(registry=registry, store=store)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        manager.start()
        try:
            for hook in on_startup:
                await _call(hook, app)
            yield
        finally:
            for hook in on_shutdown:
                await _call(hook, app)
            manager.shutdown()

    app = FastAPI(
        title="posekit",
        version=posekit.__version__,
        description=DESCRIPTION,
        openapi_tags=TAGS,
        lifespan=lifespan,
        separate_input_output_schemas=False,
    )
    app.state.manager = manager
    app.state.registry = manager.registry
    app.state.stream_limits = stream_limits or StreamLimits()
    app.state.metrics = None  # the composition root may plug its Metrics in
    install_error_handlers(app)
    app.add_middleware(BodySizeLimit, max_bytes=max_body_bytes)
    for router in routers:
        app.include_router(router)
    for module in (routes_robots, routes_sessions, routes_tasks, routes_stream):
        app.include_router(module.router)

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/docs")

    return app


async def _call(hook: Hook, app: FastAPI) -> None:
    result = hook(app)
    if inspect.isawaitable(result):
        await result
