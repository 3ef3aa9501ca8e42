"""``/api/sessions/{id}/takes``: record what a session is given, replay and compare it.

Start a take (``POST …/takes`` answers its id), drag (REST, websocket or viewer: every
input is recorded with its step), stop it (``POST …/takes/{id}/stop``): it is stored
with the session. Replay it through other weights
(``…/replay``: every step's q, errors, velocities and statuses, as JSON, CSV or NumPy
``.npz``) or several weight sets side by side (``…/compare``: their figures). Download
a take (``GET …/takes/{id}``) and upload it to another session of the same robot
(``PUT …/takes/{id}``).
"""

from __future__ import annotations

import csv
import io
import secrets

import numpy as np
from fastapi import APIRouter, Query, Response, status
from pydantic import BaseModel, ConfigDict, Field

from posekit.api.deps import ManagerDep, SessionDep
from posekit.api.errors import ERROR_RESPONSES
from posekit.sessions.errors import TakeNotFound
from posekit.sessions.kinds import TaskPatchBody
from posekit.sessions.live.session import Session
from posekit.sessions.specs.solver_settings import SolverPatch
from posekit.sessions.takes.replay import Replay, replay
from posekit.sessions.takes.summary import ReplaySummary, summarize
from posekit.sessions.takes.take import Take, TakeId, TakeInfo

router = APIRouter(
    prefix="/api/sessions/{session_id}/takes", tags=["takes"], responses=ERROR_RESPONSES
)


class StartTake(BaseModel):
    """``POST …/takes``: start recording."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"name": "circle"}]})
    name: str = Field("", max_length=200, description="A label of your own.")


class ReplayRequest(BaseModel):
    """A weight set to replay a take through: the take's start with these changes."""

    label: str = Field("", max_length=200)
    tasks: dict[str, TaskPatchBody] = Field(
        default_factory=dict,
        max_length=64,
        description="Task name → fields to change, as a task PATCH (a task the take's "
        "start does not have is a 404).",
    )
    solver: SolverPatch | None = None

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"label": "soft orientation", "tasks": {"ee": {"orientation_cost": 0.01}}}]
        }
    )


class CompareRequest(BaseModel):
    """``POST …/compare``: the weight sets to replay the take through, in order."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "variants": [
                        {"label": "default"},
                        {"label": "soft", "tasks": {"ee": {"orientation_cost": 0.01}}},
                    ]
                }
            ]
        }
    )
    variants: list[ReplayRequest] = Field(min_length=1, max_length=8)


class ReplayAnswer(BaseModel):
    """A replay, step by step (``steps`` rows), and its figures."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"summary": {"label": "", "steps": 1, "dt": 0.016667, "tasks": {"ee": {"rms": 0.01, "max": 0.01}},
                             "peak_speed": 0.5, "peak_speed_joint": "joint1", "seconds_at_limit": 0.0,
                             "failed_steps": 0, "skipped_inputs": 0, "replay_seconds": 0.001},
                 "joint_names": ["joint1"], "q": [[0.1]], "velocity": [[0.5]], "errors": {"ee": [0.01]},
                 "status": ["running"]}
            ]
        }
    )  # fmt: skip

    summary: ReplaySummary
    joint_names: list[str]
    q: list[list[float]]
    velocity: list[list[float]] = Field(description="[rad/s or m/s] per DoF.")
    errors: dict[str, list[float | None]]
    status: list[str]


@router.post(
    "", status_code=status.HTTP_201_CREATED, response_model=TakeInfo, summary="Start a take"
)
def start_take(session: SessionDep, body: StartTake | None = None) -> TakeInfo:
    """Record every input the session gets from now on (one take at a time)."""
    return session.start_take(secrets.token_urlsafe(8), (body or StartTake()).name)


@router.post("/{take_id}/stop", response_model=TakeInfo, summary="Stop the take and keep it")
def stop_take(take_id: TakeId, session: SessionDep, manager: ManagerDep) -> TakeInfo:
    """Stop recording take ``take_id`` (the id ``POST …/takes`` answered); it is stored
    with the session before this answers."""
    recording = session.recording
    if recording is None or recording.take_id != take_id:
        raise TakeNotFound(f"take {take_id!r} is not being recorded in this session")
    return manager.takes.add(session.id, session.robot, session.stop_take())


@router.get("", response_model=list[TakeInfo], summary="List takes")
async def list_takes(session: SessionDep, manager: ManagerDep) -> list[TakeInfo]:
    """The session's takes, the one being recorded first."""
    recording = [session.recording.take().info(recording=True)] if session.recording else []
    return recording + manager.takes.infos(session.id)


@router.put(
    "/{take_id}",
    status_code=status.HTTP_201_CREATED,
    response_model=TakeInfo,
    summary="Upload a take",
)
def upload_take(take_id: TakeId, take: Take, session: SessionDep, manager: ManagerDep) -> TakeInfo:
    """A take file downloaded from a session of the same robot, kept as ``take_id``."""
    return manager.takes.add(session.id, session.robot, take.model_copy(update={"id": take_id}))


@router.get("/{take_id}", response_model=Take, summary="Download a take")
async def get_take(take_id: str, session: SessionDep, manager: ManagerDep) -> Response:
    take = manager.takes.get(session.id, take_id)
    return Response(
        take.model_dump_json(),
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="take-{take.id}.json"'},
    )


@router.delete("/{take_id}", status_code=status.HTTP_204_NO_CONTENT, summary="Delete a take")
def delete_take(take_id: str, session: SessionDep, manager: ManagerDep) -> Response:
    manager.takes.delete(session.id, take_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


def _replay(session: Session, take: Take, request: ReplayRequest) -> Replay:
    tasks = {name: patch.model_dump(exclude_unset=True) for name, patch in request.tasks.items()}
    return replay(take, session.model, session.entry, tasks=tasks, solver=request.solver)


@router.post("/{take_id}/replay", response_model=ReplayAnswer, summary="Replay a take")
def replay_take(
    take_id: str,
    session: SessionDep,
    manager: ManagerDep,
    request: ReplayRequest | None = None,
    format: str = Query("json", pattern="^(json|csv|npz|mjcf)$"),
    every: int = Query(6, ge=1, le=10_000, description="mjcf: a key every this many steps."),
) -> Response | ReplayAnswer:
    """Through the take's start with ``tasks`` and ``solver`` changed, offline, at the
    spec's fixed ``dt``: the same inputs at the same steps (two replays are equal).
    ``format=mjcf``: q(t) as an MJCF ``<keyframe>`` of one key every ``every`` steps
    (``time`` [s] since the take's start), to paste into the robot's model."""
    request = request or ReplayRequest()
    take = manager.takes.get(session.id, take_id)
    result = _replay(session, take, request)
    if format == "csv":
        return Response(_csv(result), media_type="text/csv")
    if format == "npz":
        return Response(_npz(result), media_type="application/octet-stream")
    if format == "mjcf":
        return Response(_keyframes(result, take.id, every), media_type="application/xml")
    return ReplayAnswer(
        summary=summarize(session.model, result, request.label),
        joint_names=result.joint_names,
        q=result.q.tolist(),
        velocity=result.velocity.tolist(),
        errors=result.errors,
        status=result.status,
    )


@router.post(
    "/{take_id}/compare", response_model=list[ReplaySummary], summary="Compare weight sets"
)
def compare_take(
    take_id: str, body: CompareRequest, session: SessionDep, manager: ManagerDep
) -> list[ReplaySummary]:
    """The take replayed through each variant; their figures, in order."""
    take = manager.takes.get(session.id, take_id)
    return [
        summarize(session.model, _replay(session, take, variant), variant.label)
        for variant in body.variants
    ]


def _csv(result: Replay) -> str:
    """One row per step: step, t [s], status, q_0…, then each task's error norm."""
    out = io.StringIO()
    writer = csv.writer(out)
    tasks = list(result.errors)
    writer.writerow(["step", "t", "status", *(f"q_{i}" for i in range(result.q.shape[1])), *tasks])
    for k, q in enumerate(result.q):
        errors = ["" if (e := result.errors[t][k]) is None else repr(e) for t in tasks]
        writer.writerow([k, repr((k + 1) * result.dt), result.status[k], *map(repr, q), *errors])
    return out.getvalue()


def _keyframes(result: Replay, take_id: str, every: int) -> str:
    """``<keyframe>`` with a ``<key>`` of every ``every``-th step's q (and the last)."""
    steps = sorted({*range(every - 1, len(result.q), every), len(result.q) - 1} - {-1})
    keys = [
        f'  <key name="take-{take_id}-{k + 1}" time="{(k + 1) * result.dt:.6g}" '
        f'qpos="{" ".join(repr(float(v)) for v in result.q[k])}"/>'
        for k in steps
    ]
    return "<keyframe>\n" + "\n".join(keys) + "\n</keyframe>\n"


def _npz(result: Replay) -> bytes:
    """``q``, ``velocity``, ``status`` and ``error_<task>`` arrays (NaN: no error)."""
    arrays = {"q": result.q, "velocity": result.velocity, "status": np.array(result.status)}
    for name, norms in result.errors.items():
        arrays[f"error_{name}"] = np.array([np.nan if e is None else e for e in norms])
    out = io.BytesIO()
    np.savez(out, **arrays)  # type: ignore[arg-type]
    return out.getvalue()
