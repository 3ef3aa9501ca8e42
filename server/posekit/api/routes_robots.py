"""``/api/health`` and ``/api/robots``: what the server offers."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query

import posekit
from posekit.api.deps import ManagerDep
from posekit.api.errors import ERROR_RESPONSES
from posekit.api.protocol import Health
from posekit.robots import RobotDescription, RobotSummary, describe_model
from posekit.sessions.solver_settings import available_solvers

router = APIRouter(prefix="/api", responses={k: ERROR_RESPONSES[k] for k in (404, 422, 503)})


@router.get("/health", response_model=Health, tags=["meta"], summary="Liveness and capacity")
def health(manager: ManagerDep) -> Health:
    """Answers while the server runs; lists the installed QP solvers."""
    return Health(
        status="ok",
        version=posekit.__version__,
        sessions=manager.count(),
        max_sessions=manager.max_sessions,
        solvers=available_solvers(),
    )


@router.get("/robots", response_model=list[RobotSummary], tags=["robots"], summary="List robots")
def list_robots(
    manager: ManagerDep,
    category: Annotated[
        str | None, Query(description="Only this category (arm, humanoid, …).")
    ] = None,
    source: Annotated[
        Literal["builtin", "menagerie"] | None, Query(description="Only this source.")
    ] = None,
) -> list[RobotSummary]:
    """Built-in robots, then every MuJoCo Menagerie robot (listing downloads nothing)."""
    return [
        RobotSummary.of(entry)
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
    and the default preset. Loads the model (a Menagerie robot is downloaded on first use)."""
    registry = manager.registry
    robot_entry = registry.get(robot)
    entry_point = registry.resolve_entry(robot, entry)
    return describe_model(robot_entry, entry_point, registry.model(robot, entry_point))
