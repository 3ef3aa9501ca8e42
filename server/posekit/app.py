"""The composition root and the one app factory: the API with the browser viewer and
the deployment settings (persistence, access token, CORS, limits, metrics) wired in.

``posekit.api`` knows sessions, ``posekit_viewer`` knows sessions; only this module
knows both, and the ``POSEKIT_*`` environment (:mod:`posekit.settings`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from fastapi import APIRouter, FastAPI, Response
from fastapi.middleware.cors import CORSMiddleware
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.middleware.trustedhost import TrustedHostMiddleware

import posekit
from posekit.api.app import DESCRIPTION, TAGS, Hook, call_hook, install_api
from posekit.api.docs_pages import install_docs
from posekit.api.lease_metrics import LeaseCollector
from posekit.api.observability import Metrics, RequestContext, configure_logging
from posekit.api.origin_check import WebSocketOriginCheck
from posekit.api.security import TokenAuth
from posekit.api.stream_limits import StreamLimits
from posekit.own_robots import OwnRobots
from posekit.robots import RobotRegistry
from posekit.sessions.live.session import Session
from posekit.sessions.manager import SessionManager
from posekit.sessions.solving.solver import Solver
from posekit.settings import Settings
from posekit.storage import storage_from


def create_app(
    settings: Settings | None = None,
    *,
    manager: SessionManager | None = None,
    on_startup: Sequence[Hook] = (),
    on_shutdown: Sequence[Hook] = (),
) -> FastAPI:
    """The posekit app: ``/api`` (REST + websocket), ``/docs`` and ``/redoc`` (offline),
    ``/api/metrics``, the landing page ``/`` and the viewers ``/viewer/{sid}``; the robots
    of the settings' folder and file and the uploaded ones
    (:class:`~posekit.own_robots.OwnRobots`), live-reloaded while it runs.

    Args:
        settings: Deployment settings; :meth:`Settings.from_env` by default.
        manager: The sessions to serve; by default a manager built from ``settings``
            (its store, limits and solve loop). It is started with the app and shut
            down with it.
        on_startup: Called with the app after the manager started.
        on_shutdown: Called with the app before the manager shuts down.
    """
    from posekit_viewer.hub import ViewerHub
    from posekit_viewer.web import static_files, viewer_router

    settings = settings or Settings.from_env()
    configure_logging(settings.log_level, settings.log_format)
    if manager is None:
        manager = manager_from(settings)
    own_robots = OwnRobots(settings, manager)
    hub = ViewerHub(manager)
    manager.on_session_closed(hub.forget)
    metrics = metrics_of(manager)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        manager.start()
        own_robots.start()
        try:
            for hook in on_startup:
                await call_hook(hook, app)
            yield
        finally:
            for hook in on_shutdown:
                await call_hook(hook, app)
            own_robots.stop()
            hub.stop_all()
            manager.shutdown()

    app = FastAPI(
        title="posekit",
        version=posekit.__version__,
        description=DESCRIPTION,
        openapi_tags=TAGS,
        lifespan=lifespan,
        separate_input_output_schemas=False,
        docs_url=None,  # served offline by install_docs
        redoc_url=None,
    )
    app.include_router(viewer_router(manager, hub))  # first: it serves ``/`` too
    app.mount("/static", static_files(), name="static")
    install_docs(app, favicon_url="/favicon.ico")
    app.include_router(_metrics_router(metrics))
    install_api(
        app,
        manager,
        max_body_bytes=settings.max_body_bytes,
        stream_limits=StreamLimits(settings.ws_max_bytes, settings.ws_rate, settings.ws_token_rate),
        uploads=own_robots.uploads,
        max_upload_bytes=settings.upload_max_bytes,
    )
    app.state.own_robots = own_robots
    app.state.viewer_hub = hub
    app.state.metrics = metrics
    app.state.settings = settings
    _add_middleware(app, settings, metrics)
    return app


def metrics_of(manager: SessionManager) -> Metrics:
    """The app's metrics, with the manager's gauges and its solve loop's steps."""
    metrics = Metrics()
    metrics.gauge("posekit_sessions", "Live sessions.", lambda: float(manager.count()))
    metrics.gauge(
        "posekit_sessions_unloaded",
        "Sessions unloaded after being idle (revived on their next request).",
        lambda: float(len(manager.unloaded())),
    )
    metrics.gauge(
        "posekit_sessions_throttled",
        "Running sessions stepped below their rate_hz to share the solver fairly.",
        lambda: float(sum(s.state.throttled for s in running(manager))),
    )
    metrics.registry.register(LeaseCollector(manager.leases, lambda: owned(manager)))
    metrics.gauge(
        "posekit_session_rate_hz",
        "Mean rate running sessions are stepped at [Hz] (the rate_hz of their states).",
        lambda: mean_rate(running(manager)),
    )
    manager.solver.on_steps = metrics.observe_steps
    return metrics


def owned(manager: SessionManager) -> int:
    """Sessions this replica owns: the leases it holds in a cluster, else its live ones."""
    return len(manager.leases.held()) if manager.leases.clustered else manager.count()


def running(manager: SessionManager) -> list[Session]:
    """Live sessions whose latest state is running."""
    return [s for s in manager.sessions() if s.state.status == "running"]


def mean_rate(sessions: list[Session]) -> float:
    """Mean ``rate_hz`` of the sessions' latest states (0 without any)."""
    return sum(s.state.rate_hz for s in sessions) / len(sessions) if sessions else 0.0


def _add_middleware(app: FastAPI, settings: Settings, metrics: Metrics) -> None:
    """From the outside in: request ids and metrics, the ``Host`` check, CORS (so that
    preflights are answered before the token is asked for), the websocket ``Origin``
    check, the token. (Starlette runs the middleware added last first.)"""
    if settings.token:
        app.add_middleware(
            TokenAuth, token=settings.token, trust_forwarded_proto=settings.trust_proxy
        )
    app.add_middleware(WebSocketOriginCheck, allowed_origins=settings.cors_origins)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["*"],
            allow_headers=["*"],
            allow_credentials=True,
        )
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=settings.served_hosts())
    app.add_middleware(RequestContext, metrics=metrics)


def manager_from(settings: Settings) -> SessionManager:
    """The session manager ``settings`` describe: store, limits and solve loop."""
    registry = RobotRegistry(cache=settings.cache_limits(), download=settings.menagerie_download)
    store, leases = storage_from(settings)
    return SessionManager(
        registry,
        store=store,
        leases=leases,
        max_sessions=settings.max_sessions,
        max_stored_sessions=settings.max_stored_sessions,
        max_tasks=settings.max_tasks,
        max_limits=settings.max_limits,
        max_collision_pairs=settings.max_collision_pairs,
        idle_unload_s=settings.idle_unload_s,
        solver=Solver(settings.fair_share_capacity(), max_step_s=settings.max_step_s()),
    )


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
                "description": "Prometheus text format.",
            }
        },
    )
    def prometheus() -> Response:
        """Sessions, solve steps and their duration, websocket clients, rejected requests."""
        return Response(metrics.render(), media_type=CONTENT_TYPE_LATEST)

    return router
