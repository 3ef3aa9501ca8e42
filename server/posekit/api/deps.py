"""Request-scoped access to the app's session manager."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request, WebSocket
from starlette.concurrency import run_in_threadpool

from posekit.robots.errors import RobotConflict
from posekit.robots.uploads import RobotUploads
from posekit.sessions.live.session import Session
from posekit.sessions.manager import SessionManager


def manager_of(connection: Request | WebSocket) -> SessionManager:
    """The :class:`SessionManager` the app was created with."""
    return connection.app.state.manager


def get_manager(request: Request) -> SessionManager:
    """FastAPI dependency: the session manager."""
    return manager_of(request)


async def get_session(session_id: str, request: Request) -> Session:
    """FastAPI dependency: the session of the path's ``session_id`` (404 when unknown).

    A live session is found on the event loop; only one to revive (a compile) or to take
    over from the store goes to a worker thread. A busy server's loop answers a read
    without two hops through the thread pool."""
    manager = manager_of(request)
    session = manager.live(session_id)
    return session if session is not None else await run_in_threadpool(manager.get, session_id)


def edit_session(session_id: str, request: Request) -> Iterator[Session]:
    """FastAPI dependency: the session of the path's ``session_id``, to change; the
    manager stores it after the route returned and before the response is sent
    (:meth:`SessionManager.edit`)."""
    with manager_of(request).edit(session_id) as session:
        yield session


def get_uploads(request: Request) -> RobotUploads:
    """FastAPI dependency: the store of uploaded robots (409 when the app has none)."""
    uploads: RobotUploads | None = request.app.state.robot_uploads
    if uploads is None:
        raise RobotConflict("this server takes no robot uploads")
    return uploads


ManagerDep = Annotated[SessionManager, Depends(get_manager)]
UploadsDep = Annotated[RobotUploads, Depends(get_uploads)]
SessionDep = Annotated[Session, Depends(get_session)]
EditedSessionDep = Annotated[Session, Depends(edit_session, scope="function")]
"""A session a route changes: its change is stored before the 2xx leaves."""
