"""``/api/sessions``: create, list, inspect, export, delete sessions; set q and solver."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Query, Response, status

from posekit.api.deps import EditedSessionDep, ManagerDep, SessionDep
from posekit.api.errors import CREATED, ERROR_RESPONSES
from posekit.api.protocol import (
    QResponse,
    SessionDetail,
    SessionSummary,
    SetQ,
    StateMessage,
    state_of,
    summary_of,
)
from posekit.sessions.export.export_script import keyframe_line, python_script
from posekit.sessions.live.session import Session
from posekit.sessions.specs.session_spec import CreateSession, SessionSpec
from posekit.sessions.specs.solver_settings import SolverPatch, SolverSettings
from posekit.sessions.specs.types import NAME_PATTERN

router = APIRouter(prefix="/api/sessions", tags=["sessions"], responses=ERROR_RESPONSES)


def detail_of(session: Session) -> SessionDetail:
    summary = summary_of(session.summary())
    return SessionDetail(**summary.model_dump(), state=state_of(session.state))


@router.get("", response_model=list[SessionSummary], summary="List sessions")
def list_sessions(manager: ManagerDep) -> list[SessionSummary]:
    """Every session, oldest first: live ones, and idle ones unloaded to storage
    (``status`` ``unloaded``; any request naming one revives it); in a cluster, those
    of every replica (``owner``, ``live``; ``status`` ``remote`` on another replica)."""
    return [summary_of(info) for info in manager.listing()]


@router.post(
    "",
    response_model=SessionDetail,
    status_code=status.HTTP_201_CREATED,
    summary="Create a session",
    responses={**CREATED, 429: {"description": "Too many sessions."}},
)
def create_session(
    manager: ManagerDep,
    response: Response,
    request: Annotated[CreateSession | None, Body()] = None,
) -> SessionDetail:
    """A session on a robot (default: the built-in arm) at a keyframe, with the robot's
    default preset tasks unless ``preset`` is false; or a session restored from a spec
    exported by ``GET /api/sessions/{id}/spec``. It starts solving at once."""
    session = manager.create(request)
    response.headers["Location"] = f"/api/sessions/{session.id}"
    return detail_of(session)


@router.get("/{session_id}", response_model=SessionDetail, summary="Get a session")
async def read_session(session: SessionDep) -> SessionDetail:
    """Status, task and limit names, solver settings and the latest state."""
    return detail_of(session)


@router.delete("/{session_id}", status_code=status.HTTP_204_NO_CONTENT, summary="Delete a session")
def delete_session(session_id: str, manager: ManagerDep) -> Response:
    """Stops the session; its websocket watchers get an error message and are closed."""
    manager.delete(session_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/{session_id}/spec", response_model=SessionSpec, summary="Export the spec")
async def export_spec(session: SessionDep) -> SessionSpec:
    """The portable spec (robot, q, tasks with targets, limits, solver);
    ``POST /api/sessions {"spec": …}`` restores it exactly."""
    return session.spec()


@router.get(
    "/{session_id}/export.py",
    response_class=Response,
    summary="Export as a Python script",
    responses={200: {"content": {"text/x-python": {}}, "description": "The script."}},
)
def export_python(session: SessionDep) -> Response:
    """A runnable script on the posekit engine API (mink's) that rebuilds this session's
    tasks, targets, weights, limits and solver settings on the same model and, from its
    q, steps exactly as the session does (``--steps N``; prints q and the errors)."""
    script = python_script(session.spec(), session.model, session.id)
    disposition = f'attachment; filename="posekit_{session.id}.py"'
    return Response(
        script, media_type="text/x-python", headers={"Content-Disposition": disposition}
    )


@router.get(
    "/{session_id}/export.key",
    response_class=Response,
    summary="Export q as an MJCF keyframe",
    responses={200: {"content": {"application/xml": {}}, "description": "One <key> element."}},
)
def export_keyframe(
    session: SessionDep,
    name: Annotated[str, Query(pattern=NAME_PATTERN, description="The key's name.")] = "posekit",
) -> Response:
    """The current configuration as ``<key name="…" qpos="…"/>`` (exact floats), to
    paste into a model's ``<keyframe>``."""
    return Response(keyframe_line(session.spec().q, name) + "\n", media_type="application/xml")


@router.put("/{session_id}/spec", response_model=SessionSpec, summary="Replace the spec")
def replace_spec(spec: SessionSpec, session: EditedSessionDep) -> SessionSpec:
    """Load a spec of the same robot into this session (q, tasks, limits, solver); the
    session keeps its id and watchers. Validated completely before anything changes."""
    return session.replace_spec(spec)


@router.get("/{session_id}/state", response_model=StateMessage, summary="Latest state")
async def read_state(session: SessionDep) -> StateMessage:
    """The latest solved state (what the stream sends as ``state``)."""
    return state_of(session.state)


@router.put("/{session_id}/q", response_model=QResponse, summary="Set the configuration")
def set_q(body: SetQ, session: EditedSessionDep) -> QResponse:
    """Set q from a vector (size nq) or a keyframe; the solver continues from there."""
    return QResponse(q=session.set_q(q=body.q, keyframe=body.keyframe))


@router.get("/{session_id}/solver", response_model=SolverSettings, summary="Solver settings")
async def read_solver(session: SessionDep) -> SolverSettings:
    """QP backend, dt, damping, rate_hz, stream_hz, tolerance, paused."""
    return session.solver


@router.patch(
    "/{session_id}/solver", response_model=SolverSettings, summary="Change solver settings"
)
def patch_solver(patch: SolverPatch, session: EditedSessionDep) -> SolverSettings:
    """Change any of solver, dt, damping, rate_hz, stream_hz, tolerance, paused."""
    return session.set_solver(patch)
