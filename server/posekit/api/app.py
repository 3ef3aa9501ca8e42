"""The REST + websocket API on a FastAPI app: its routes, error mapping and body limit.

The app itself is made by the one app factory, :func:`posekit.app.create_app` (the
composition root), which calls :func:`install_api`; ``app.state.manager`` is then the
:class:`SessionManager` the routes serve.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable

from fastapi import FastAPI

from posekit.api import routes_robots, routes_sessions, routes_stream, routes_takes, routes_tasks
from posekit.api.body_limit import BodySizeLimit
from posekit.api.credential_budgets import CredentialBudgets
from posekit.api.errors import install_error_handlers
from posekit.api.stream_limits import StreamLimits
from posekit.robots.uploads import RobotUploads
from posekit.sessions.manager import SessionManager

Hook = Callable[[FastAPI], Awaitable[None] | None]
UPLOAD_ROUTE = ("POST", "/api/robots")

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


def install_api(
    app: FastAPI,
    manager: SessionManager,
    *,
    max_body_bytes: int,
    stream_limits: StreamLimits,
    uploads: RobotUploads | None = None,
    max_upload_bytes: int | None = None,
) -> None:
    """Serve ``manager``'s sessions on ``app``: the routes of ``/api``, the domain-error
    → HTTP mapping, and the request body limit.

    Args:
        app: The app (include routers that must win, e.g. ``/``, before calling this).
        manager: The sessions to serve.
        max_body_bytes: Larger request bodies get 413.
        stream_limits: Size and rate of a websocket client's messages.
        uploads: Where ``POST /api/robots`` stores uploaded robots (None: uploads are
            refused).
        max_upload_bytes: Larger uploads get 413 (the body limit of ``POST /api/robots``).
    """
    app.state.manager = manager
    app.state.registry = manager.registry
    app.state.stream_limits = stream_limits
    app.state.credential_budgets = CredentialBudgets(stream_limits.token_rate)
    app.state.robot_uploads = uploads
    app.state.metrics = None  # the composition root may plug its Metrics in
    install_error_handlers(app)
    larger = {UPLOAD_ROUTE: max_upload_bytes} if max_upload_bytes else {}
    app.add_middleware(BodySizeLimit, max_bytes=max_body_bytes, routes=larger)
    for module in (routes_robots, routes_sessions, routes_tasks, routes_takes, routes_stream):
        app.include_router(module.router)


async def call_hook(hook: Hook, app: FastAPI) -> None:
    """Call a startup/shutdown hook with the app, awaiting it when it is a coroutine."""
    result = hook(app)
    if inspect.isawaitable(result):
        await result
