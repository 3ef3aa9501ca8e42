"""``/api/health`` and ``/api/robots``: what the server offers, and robots users upload."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, File, Query, Response, status

import posekit
from posekit.api.deps import ManagerDep, UploadsDep
from posekit.api.errors import ERROR_RESPONSES, ErrorBody
from posekit.api.protocol import DatabaseHealth, Health, RobotUpload
from posekit.robots import RobotDescription, RobotRegistry, RobotSummary, describe_model
from posekit.sessions.specs.solver_settings import available_solvers

router = APIRouter(prefix="/api", responses={k: ERROR_RESPONSES[k] for k in (404, 422, 503)})


@router.get("/health", response_model=Health, tags=["meta"], summary="Liveness and capacity")
def health(manager: ManagerDep) -> Health:
    """Answers while the server runs; lists the installed QP solvers, names this replica
    and says whether the sessions' database answers."""
    return Health(
        status="ok",
        version=posekit.__version__,
        sessions=manager.count(),
        max_sessions=manager.max_sessions,
        solvers=available_solvers(),
        replica=manager.leases.replica_id,
        database=DatabaseHealth(kind=manager.store.kind, ok=manager.store.ping()),
    )


@router.get("/robots", response_model=list[RobotSummary], tags=["robots"], summary="List robots")
def list_robots(
    manager: ManagerDep,
    category: Annotated[
        str | None, Query(description="Only this category (arm, humanoid, …).")
    ] = None,
    source: Annotated[
        Literal["builtin", "menagerie", "local", "uploaded"] | None,
        Query(description="Only this source."),
    ] = None,
) -> list[RobotSummary]:
    """Built-in robots, then the robots from files (local and uploaded), then every MuJoCo
    Menagerie robot (listing downloads nothing)."""
    return [
        RobotSummary.of(entry, manager.registry.availability(entry.name))
        for entry in manager.registry.entries()
        if (category is None or entry.category == category)
        and (source is None or entry.source == source)
    ]


@router.get(
    "/robots/{robot}",
    response_model=RobotDescription,
    tags=["robots"],
    summary="Describe a robot",
    responses={503: {"description": "The Menagerie robot could not be fetched."}},
)
def describe_robot(
    manager: ManagerDep,
    robot: str,
    entry: Annotated[
        str | None, Query(description="Entry point; the robot's default when omitted.")
    ] = None,
) -> RobotDescription:
    """Frames by type, joints with ranges, keyframes, equalities, nq/nv, floating base,
    the default preset and why it holds each frame. Loads the model (a Menagerie robot is
    downloaded on first use)."""
    return _describe(manager.registry, robot, entry)


def _describe(registry: RobotRegistry, robot: str, entry: str | None) -> RobotDescription:
    robot_entry = registry.get(robot)
    entry_point = registry.resolve_entry(robot, entry)
    model = registry.model(robot, entry_point)
    source = registry.source(robot, entry_point)
    return describe_model(robot_entry, entry_point, model, source.notes if source else ())


@router.post(
    "/robots",
    response_model=RobotDescription,
    status_code=status.HTTP_201_CREATED,
    tags=["robots"],
    summary="Upload a robot",
    responses={
        **{k: ERROR_RESPONSES[k] for k in (409, 413, 422, 507)},
        429: {
            "model": ErrorBody,
            "description": "Another upload is being checked (`uploads_busy`): send it again "
            "after `Retry-After` seconds; nothing was kept.",
            "headers": {"Retry-After": {"schema": {"type": "string"}}},
        },
    },
)
def upload_robot(
    manager: ManagerDep, uploads: UploadsDep, form: Annotated[RobotUpload, File()]
) -> RobotDescription:
    """Check the files (paths confined to the upload, size caps, references only inside
    it, compiled in a child process with a time limit, model size caps), store them in
    the data directory and serve them as robot ``name`` (source ``uploaded``; kept across
    restarts). 413: over a size cap; 422: malformed, outside references, or MuJoCo's
    compile error (file names relative to the upload); 409: the name is taken, or the
    server keeps its maximum of uploaded robots; 429: another upload is being checked."""
    robot = uploads.add(form.file.filename or "", form.file.file, form.name, form.entry)
    return _describe(manager.registry, robot.name, None)


@router.delete(
    "/robots/{robot}",
    status_code=status.HTTP_204_NO_CONTENT,
    tags=["robots"],
    summary="Delete an uploaded robot",
    responses={409: ERROR_RESPONSES[409]},
)
def delete_robot(uploads: UploadsDep, robot: str) -> Response:
    """Delete an uploaded robot and its files; 409 while a session (live or unloaded)
    uses it, or when it is not an uploaded robot."""
    uploads.remove(robot)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
