"""``/api/sessions/{id}/tasks`` and ``/limits``: the task stack and the limits, live."""

from __future__ import annotations

from fastapi import APIRouter, Response, status

from posekit.api.deps import EditedSessionDep, SessionDep
from posekit.api.errors import CREATED, ERROR_RESPONSES
from posekit.sessions.kinds import LimitPatchBody, LimitSpec, TaskPatchBody, TaskSpec

router = APIRouter(prefix="/api/sessions/{session_id}", responses=ERROR_RESPONSES)


@router.get("/tasks", response_model=list[TaskSpec], tags=["tasks"], summary="List tasks")
async def list_tasks(session: SessionDep) -> list[TaskSpec]:
    """Task specs in stack order, with their current targets."""
    return session.tasks()


@router.post(
    "/tasks",
    response_model=TaskSpec,
    status_code=status.HTTP_201_CREATED,
    tags=["tasks"],
    summary="Add a task",
    responses=CREATED,
)
def add_task(spec: TaskSpec, session: EditedSessionDep, response: Response) -> TaskSpec:
    """Add a task of any engine type (``type``), by frame/joint/equality names, as an
    objective or a hard constraint; without a target it starts at its current value."""
    added = session.add_task(spec)
    response.headers["Location"] = f"/api/sessions/{session.id}/tasks/{added.name}"
    return added


@router.get("/tasks/{name}", response_model=TaskSpec, tags=["tasks"], summary="Get a task")
async def read_task(name: str, session: SessionDep) -> TaskSpec:
    return session.task(name)


@router.patch("/tasks/{name}", response_model=TaskSpec, tags=["tasks"], summary="Change a task")
def patch_task(name: str, patch: TaskPatchBody, session: EditedSessionDep) -> TaskSpec:
    """Costs, gain, lm_damping, axis, target, enabled, role — the fields of the task's type
    (the schema lists each type's; one of another type is a 409); all validated before
    any of them is applied."""
    return session.patch_task(name, patch.model_dump(exclude_unset=True))


@router.delete(
    "/tasks/{name}",
    status_code=status.HTTP_204_NO_CONTENT,
    tags=["tasks"],
    summary="Remove a task",
)
def remove_task(name: str, session: EditedSessionDep) -> Response:
    session.remove_task(name)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/limits", response_model=list[LimitSpec], tags=["limits"], summary="List limits")
async def list_limits(session: SessionDep) -> list[LimitSpec]:
    return session.limits()


@router.post(
    "/limits",
    response_model=LimitSpec,
    status_code=status.HTTP_201_CREATED,
    tags=["limits"],
    summary="Add a limit",
    responses=CREATED,
)
def add_limit(spec: LimitSpec, session: EditedSessionDep, response: Response) -> LimitSpec:
    """Joint ranges, joint speeds, floating-base speeds or collision avoidance."""
    added = session.add_limit(spec)
    response.headers["Location"] = f"/api/sessions/{session.id}/limits/{added.name}"
    return added


@router.get("/limits/{name}", response_model=LimitSpec, tags=["limits"], summary="Get a limit")
async def read_limit(name: str, session: SessionDep) -> LimitSpec:
    return session.limit(name)


@router.patch("/limits/{name}", response_model=LimitSpec, tags=["limits"], summary="Change a limit")
def patch_limit(name: str, patch: LimitPatchBody, session: EditedSessionDep) -> LimitSpec:
    """``enabled`` and/or params of the limit's type, flat (e.g. ``{"gain": 0.5}``)."""
    return session.patch_limit(name, patch.model_dump(exclude_unset=True))


@router.delete(
    "/limits/{name}",
    status_code=status.HTTP_204_NO_CONTENT,
    tags=["limits"],
    summary="Remove a limit",
)
def remove_limit(name: str, session: EditedSessionDep) -> Response:
    session.remove_limit(name)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
