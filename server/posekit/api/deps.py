"""Request-scoped access to the app's session manager."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request, WebSocket

from posekit.sessions.manager import SessionManager
from posekit.sessions.session import Session


def manager_of(connection: Request | WebSocket) -> SessionManager:
    """The :class:`SessionManager` the app was created with."""
    return connection.app.state.manager


def get_manager(request: Request) -> SessionManager:
    """FastAPI dependency: the session manager."""
    return manager_of(request)


def get_session(session_id: str, request: Request) -> Session:
    """FastAPI dependency: the session of the path's ``session_id`` (404 when unknown)."""
    return manager_of(request).get(session_id)


ManagerDep = Annotated[SessionManager, Depends(get_manager)]
SessionDep = Annotated[Session, Depends(get_session)]
