"""Error mapping: every known failure becomes a 4xx JSON body ``{detail, code, errors?}``.

==========================================  ======  ==================
exception                                    status  code
==========================================  ======  ==================
pydantic ValidationError / bad JSON          422     invalid
SessionNotFound, TaskNotFound, RobotNotFound  404     not_found
NameConflict, RobotConflict                  409     conflict
RobotInUse                                   409     robot_in_use
TooManyRobots                                409     too_many_robots
StackFull (tasks, limits, collision pairs)   409     too_many_tasks, too_many_limits,
                                                     too_many_collision_pairs
UploadTooLarge                               413     too_large
RobotFileInvalid (an upload MuJoCo refuses)  422     invalid
any other PosekitError                       409     mismatch
SessionLimitReached                          429     too_many_sessions
UploadsBusy (another upload is checked)      429     uploads_busy
RobotUnavailable                             503     robot_unavailable
NotOwner (another replica solves it)         503     not_owner
DatabaseUnavailable                          503     database_unavailable
StorageFailed: the store is full, DiskFull   507     storage_full
StorageFailed: the store cannot write        503     storage_unavailable
==========================================  ======  ==================

``uploads_busy`` carries ``Retry-After: 1`` too. A ``not_owner`` answer did nothing on
this replica; it carries ``Retry-After: 1``,
``X-Posekit-Owner: <replica id>`` when the owner is known, and ``owner`` in the body, so
that a proxy (``proxy_next_upstream http_503``) or the client can send it again.

422 means the request breaks the OpenAPI schema (a type, a range, a missing or unknown
field): the schema says exactly what is accepted. A request that follows the schema but
does not fit the session it is sent to — a frame, joint, geom or keyframe its robot does
not have, a vector of another size than its nq, a field its task's type does not have,
values that contradict each other — is a 409 ``mismatch``: nothing in the schema could
have told the client, the session's state decides.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import compile_path

from posekit.ik.exceptions import PosekitError
from posekit.ik.near_miss import did_you_mean
from posekit.robots.errors import (
    DiskFull,
    RobotConflict,
    RobotFileInvalid,
    RobotInUse,
    RobotNotFound,
    RobotUnavailable,
    TooManyRobots,
    UploadsBusy,
    UploadTooLarge,
)
from posekit.sessions.errors import (
    DatabaseUnavailable,
    NameConflict,
    NotFound,
    NotOwner,
    SessionLimitReached,
    StackFull,
    StorageFailed,
)

logger = logging.getLogger(__name__)


class ErrorBody(BaseModel):
    """Every error response: a readable message, a stable code, and field errors."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "detail": "site 'tcp' does not exist in the model. Available site names: ['ee', 'wrist_cam']",
                    "code": "mismatch",
                }
            ]
        }
    )

    detail: str = Field(description="What was wrong, naming the bad value and what is valid.")
    code: str = Field(description="not_found | conflict | invalid | too_large | …")
    errors: list[dict[str, Any]] | None = Field(
        None, description="Per-field validation errors (location, message), when relevant."
    )
    owner: str | None = Field(
        None, description="`not_owner`: the replica that solves the session, when known."
    )


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorBody, "description": "Unknown session, task, limit or robot."},
    409: {
        "model": ErrorBody,
        "description": "Follows the schema but does not fit this session (a frame, joint or "
        "keyframe its robot does not have, a wrong size, a field the task's type does not "
        "have: `mismatch`), a name already used (`conflict`), or the session is full.",
    },
    413: {"model": ErrorBody, "description": "Request body too large."},
    422: {"model": ErrorBody, "description": "The body breaks the schema (message says where)."},
    503: {
        "model": ErrorBody,
        "description": "A robot that cannot be loaded now: a Menagerie robot that cannot be "
        "fetched, or the robot of a stored session that is unavailable (tried again on "
        "every request); in a cluster, another replica solves the session (`not_owner`: "
        "nothing changed, send it again) or the database cannot be reached; the session "
        "store cannot write (`storage_unavailable`: nothing changed).",
        "headers": {
            "Retry-After": {
                "description": "`not_owner`: seconds before sending it again.",
                "schema": {"type": "string"},
            },
            "X-Posekit-Owner": {
                "description": "`not_owner`: the replica that solves the session.",
                "schema": {"type": "string"},
            },
        },
    },
    507: {
        "model": ErrorBody,
        "description": "The server's disk is full (`storage_full`): the change was not "
        "stored and nothing changed; it can be sent again once there is space.",
    },
}

CREATED: dict[int | str, dict[str, Any]] = {
    201: {
        "headers": {
            "Location": {
                "description": "The URL of what was created.",
                "schema": {"type": "string"},
            }
        }
    }
}
"""The ``Location`` header of a 201."""


def status_of(exc: PosekitError) -> tuple[int, str]:
    """HTTP status and error code of an engine/session/robot error."""
    if isinstance(exc, (NotFound, RobotNotFound)):
        return 404, "not_found"
    if isinstance(exc, RobotInUse):
        return 409, "robot_in_use"
    if isinstance(exc, NameConflict | RobotConflict):
        return 409, "conflict"
    if isinstance(exc, TooManyRobots):
        return 409, "too_many_robots"
    if isinstance(exc, UploadTooLarge):
        return 413, "too_large"
    if isinstance(exc, RobotFileInvalid):
        return 422, "invalid"
    if isinstance(exc, StackFull):
        return 409, exc.code
    if isinstance(exc, SessionLimitReached):
        return 429, "too_many_sessions"
    if isinstance(exc, UploadsBusy):
        return 429, "uploads_busy"
    if isinstance(exc, RobotUnavailable):
        return 503, "robot_unavailable"
    if isinstance(exc, NotOwner):
        return 503, "not_owner"
    if isinstance(exc, DatabaseUnavailable):
        return 503, "database_unavailable"
    if isinstance(exc, DiskFull):
        return 507, "storage_full"
    if isinstance(exc, StorageFailed):
        return (507, "storage_full") if exc.full else (503, "storage_unavailable")
    return 409, "mismatch"


RETRY_AFTER_S = 1
"""``Retry-After`` of a ``not_owner`` answer [s]: about a third of a lease's lifetime."""
OWNER_HEADER = "X-Posekit-Owner"


def response_of(exc: PosekitError) -> JSONResponse:
    """The HTTP answer to a domain error (the module docstring's table), with the
    headers and body fields of a ``not_owner`` answer."""
    status, code = status_of(exc)
    owner = exc.owner if isinstance(exc, NotOwner) else None
    response = error_response(status, code, str(exc), owner=owner)
    if isinstance(exc, NotOwner | UploadsBusy):
        response.headers["Retry-After"] = str(RETRY_AFTER_S)
    if isinstance(exc, NotOwner) and exc.owner:
        response.headers[OWNER_HEADER] = exc.owner
    return response


_UNION_MEMBER = re.compile(r"^[A-Z][A-Za-z0-9]*$")
"""A model's name in an error location: the alternative of a union that was tried."""


def _location(loc: Sequence[Any]) -> str:
    """``body.params.position_cost.constrained-float`` → ``params.position_cost``; the
    union alternatives tried (``FrameTaskPatch.gain``) are left out, so that the same
    problem in every alternative is reported once (``gain``)."""
    parts = [
        str(p)
        for p in loc
        if p != "body"
        and not (isinstance(p, str) and ("[" in p or "-" in p or _UNION_MEMBER.match(p)))
    ]
    return ".".join(parts) or "body"


def _near_miss(error: Mapping[str, Any], where: str, fields: Collection[str]) -> str:
    """A suggestion for a misspelt field or task type, or ``""``."""
    kind = error.get("type")
    if kind == "extra_forbidden":
        return did_you_mean(where.rsplit(".", 1)[-1], fields)
    if kind == "union_tag_invalid":
        context = error.get("ctx") or {}
        expected = re.findall(r"'([^']+)'", str(context.get("expected_tags", "")))
        return did_you_mean(str(context.get("tag", "")), expected)
    return ""


def describe_validation(
    errors: Sequence[Mapping[str, Any]], fields: Collection[str] = ()
) -> tuple[str, list[dict[str, Any]]]:
    """A one-line message and JSON-safe per-field errors from pydantic errors, one per
    mistake, with a suggestion where a field (of ``fields``, the API's field names) or a
    task type is misspelt.

    Of a union's alternatives, a field that some alternative takes is not reported as
    unknown by the others: the problem with its value is.
    """
    clean: list[dict[str, Any]] = []
    lines: list[str] = []
    known = {_location(e.get("loc", ())) for e in errors if e.get("type") != "extra_forbidden"}
    for error in errors:
        where = _location(error.get("loc", ()))
        kind = error.get("type", "")
        if kind == "extra_forbidden" and where in known:
            continue
        if kind == "json_invalid":
            reason = (error.get("ctx") or {}).get("error", "")
            message = f"the request body is not valid JSON ({reason})"
        else:
            message = f"{where}: {error.get('msg', 'invalid')}"
            if "input" in error and kind not in ("missing",):
                shown = repr(error["input"])
                message += f" (got {shown[:80]}{'…' if len(shown) > 80 else ''})"
            message += _near_miss(error, where, fields)
        entry = {"loc": where, "type": kind, "msg": str(error.get("msg", ""))}
        if message not in lines:
            lines.append(message)
        if entry not in clean:
            clean.append(entry)
    shown = "; ".join(lines[:5]) + (f"; … ({len(lines) - 5} more)" if len(lines) > 5 else "")
    return shown or "invalid request", clean


def api_field_names(app: FastAPI) -> frozenset[str]:
    """Every field name of the API's schemas (what a misspelt field is compared with)."""
    schemas = app.openapi().get("components", {}).get("schemas", {})
    return frozenset(name for schema in schemas.values() for name in schema.get("properties", {}))


_FILE_PATH = re.compile(r"(?<![\w.:/])/(?:[^/\s'\"]+/)+([^/\s'\"]+\.[A-Za-z0-9]+)")
"""An absolute path to a file (``/…/g1_with_hands.xml``); group 1 is its name."""


def redact_paths(message: str) -> str:
    """``message`` with absolute file paths cut to their file names (errors never show
    where the server keeps its files)."""
    return _FILE_PATH.sub(r"\1", message)


def error_response(
    status: int, code: str, detail: str, errors: Any = None, owner: str | None = None
) -> JSONResponse:
    body: dict[str, Any] = {"detail": redact_paths(detail), "code": code}
    if errors:
        body["errors"] = errors
    if owner:
        body["owner"] = owner
    return JSONResponse(status_code=status, content=body)


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers of the module docstring's table on ``app``."""

    @app.exception_handler(PosekitError)
    async def _posekit_error(request: Request, exc: PosekitError) -> JSONResponse:
        return response_of(exc)

    @app.exception_handler(RequestValidationError)
    async def _request_invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        detail, errors = describe_validation(exc.errors(), api_field_names(request.app))
        return error_response(422, "invalid", detail, errors)

    @app.exception_handler(ValidationError)
    async def _model_invalid(request: Request, exc: ValidationError) -> JSONResponse:
        detail, errors = describe_validation(exc.errors(), api_field_names(request.app))
        return error_response(422, "invalid", detail, errors)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 400 and isinstance(exc.__cause__, ValueError | RecursionError):
            # A body the JSON parser gave up on (nested too deeply, a number too long).
            detail = f"the request body is not valid JSON ({exc.__cause__ or 'too deep'})"
            return error_response(422, "invalid", detail[:300])
        if exc.status_code == 405:
            return _method_not_allowed(request, str(exc.detail))
        codes = {404: "not_found", 413: "too_large"}
        response = error_response(
            exc.status_code, codes.get(exc.status_code, "http"), str(exc.detail)
        )
        response.headers.update(exc.headers or {})
        return response

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("unexpected error on %s %s", request.method, request.url.path)
        return error_response(
            500, "internal", f"internal error ({type(exc).__name__}); this is a posekit bug"
        )


def _method_not_allowed(request: Request, detail: str) -> Response:
    """405 listing every method of the path in ``Allow`` (from the OpenAPI document, which
    lists every operation of the API); ``OPTIONS`` answers 204 with it."""
    methods = {"OPTIONS"}
    for template, operations in request.app.openapi().get("paths", {}).items():
        if compile_path(template)[0].fullmatch(request.url.path):
            methods |= {method.upper() for method in operations}
    allow = ", ".join(sorted(methods))
    if request.method == "OPTIONS":
        return Response(status_code=204, headers={"Allow": allow})
    response = error_response(405, "method_not_allowed", detail)
    response.headers["Allow"] = allow
    return response
