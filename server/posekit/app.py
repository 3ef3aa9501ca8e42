"""The composition root: the API app with the browser viewer wired in.

``posekit.api`` knows sessions, ``posekit_viewer`` knows sessions; only this module
knows both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI

from posekit.api import create_app
from posekit.sessions.manager import SessionManager


def create_full_app(
    manager: SessionManager | None = None,
    *,
    on_startup: Sequence[Any] = (),
    on_shutdown: Sequence[Any] = (),
    **options: Any,
) -> FastAPI:
    """The app serving ``/api``, ``/docs``, the landing page and ``/viewer/{sid}``."""
    from posekit_viewer.hub import ViewerHub
    from posekit_viewer.web import viewer_router

    manager = manager or SessionManager()
    hub = ViewerHub(manager)

    def stop_viewers(_: FastAPI) -> None:
        hub.stop_all()

    app = create_app(
        manager,
        routers=[viewer_router(manager, hub)],
        on_startup=on_startup,
        on_shutdown=[stop_viewers, *on_shutdown],
        **options,
    )
    app.state.viewer_hub = hub
    return app
