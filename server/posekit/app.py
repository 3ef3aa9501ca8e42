"""The composition root: the API app with the browser viewer and the deployment
settings (persistence, access token, CORS, limits, metrics) wired in.

``posekit.api`` knows sessions, ``posekit_viewer`` knows sessions; only this module
knows both, and the ``POSEKIT_*`` environment (:mod:`posekit.settings`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter, FastAPI, Response
from fastapi.middleware.cors import CORSMiddleware

from posekit.api import create_app
from posekit.api.observability import Metrics, RequestContext, configure_logging
from posekit.api.security import TokenAuth
from posekit.api.stream_limits import StreamLimits
from posekit.robots import RobotRegistry
from posekit.sessions.loops.solver_processes import SolverProcesses
from posekit.sessions.manager import SessionManager
from posekit.sessions.sqlite_store import SQLiteStore
from posekit.settings import Settings


def create_full_app(
    manager: SessionManager | None = None,
    *,
    settings: Settings | None = None,
    on_startup: Sequence[Any] = (),
    on_shutdown: Sequence[Any] = (),
    **options: Any,
) -> FastAPI:
    """The app serving ``/api``, ``/docs``, ``/api/metrics``, ``/`` and ``/viewer/{sid}``."""
    from posekit_viewer.hub import ViewerHub
    from posekit_viewer.web import viewer_router

    settings = settings or Settings.from_env()
    configure_logging()
    if manager is None:
        store = SQLiteStore(settings.db) if settings.db else None
        registry = RobotRegistry()
        manager = SessionManager(
            registry,
            store=store,
            max_sessions=settings.max_sessions,
            max_tasks=settings.max_tasks,
            idle_unload_s=settings.idle_unload_s,
            solve_loop=SolverProcesses(settings.solver_processes, registry)
            if settings.solver_processes
            else None,
        )
    hub = ViewerHub(manager)
    manager.on_session_closed(hub.forget)
    metrics = Metrics()
    metrics.gauges["posekit_sessions"] = ("Live sessions.", lambda: float(manager.count()))
    metrics.gauges["posekit_sessions_unloaded"] = (
        "Sessions unloaded after being idle (revived on their next request).",
        lambda: float(len(manager.unloaded())),
    )

    def stop_viewers(_: FastAPI) -> None:
        hub.stop_all()

    options.setdefault("max_body_bytes", settings.max_body_bytes)
    options.setdefault(
        "stream_limits", StreamLimits(max_bytes=settings.ws_max_bytes, rate=settings.ws_rate)
    )
    app = create_app(
        manager,
        routers=[viewer_router(manager, hub), _metrics_router(metrics)],
        on_startup=on_startup,
        on_shutdown=[stop_viewers, *on_shutdown],
        **options,
    )
    app.state.viewer_hub = hub
    app.state.metrics = metrics
    app.state.settings = settings
    manager.solve_loop.on_step = metrics.observe_step

    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["*"],
            allow_headers=["*"],
            allow_credentials=True,
        )
    if settings.token:
        app.add_middleware(TokenAuth, token=settings.token)
    app.add_middleware(RequestContext, metrics=metrics)
    return app


def _metrics_router(metrics: Metrics) -> APIRouter:
    router = APIRouter()

    @router.get(
        "/api/metrics",
        tags=["meta"],
        summary="Prometheus metrics",
        response_class=Response,
        responses={
            200: {
                "content": {"text/plain": {"example": "posekit_sessions 2\n"}},
                "description": "Prometheus text format 0.0.4.",
            }
        },
    )
    def prometheus() -> Response:
        """Sessions, solve steps and their duration, websocket clients, rejected requests."""
        return Response(metrics.render(), media_type="text/plain; version=0.0.4")

    return router
