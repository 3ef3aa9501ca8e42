"""Errors of the session layer; all derive from the engine's :class:`PosekitError`.

The API maps them to HTTP statuses (``posekit.api.errors``): the ``NotFound`` family to
404, :class:`SessionLimitReached` to 429, :class:`NotOwner` and
:class:`DatabaseUnavailable` to 503 and everything else to 409 — the request follows
the schema (else pydantic refused it with a 422) but does not fit the session.
"""

from __future__ import annotations

from collections.abc import Iterable

from posekit.ik.exceptions import PosekitError
from posekit.ik.near_miss import did_you_mean_sentence


def _listing(names: Iterable[str]) -> str:
    names = list(names)
    shown = ", ".join(repr(n) for n in names[:20])
    return f"[{shown}{', …' if len(names) > 20 else ''}]"


class NotFound(PosekitError, LookupError):
    """Something named in the request does not exist."""


class SessionNotFound(NotFound):
    """No session has this id."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id!r} does not exist (it may have been deleted)")
        self.session_id = session_id


class TaskNotFound(NotFound):
    """The session has no task of this name."""

    def __init__(self, name: str, known: Iterable[str]) -> None:
        known = list(known)
        hint = did_you_mean_sentence(name, known)
        super().__init__(
            f"task {name!r} does not exist.{hint} The session's tasks are {_listing(known)}"
        )


class LimitNotFound(NotFound):
    """The session has no limit of this name."""

    def __init__(self, name: str, known: Iterable[str]) -> None:
        known = list(known)
        hint = did_you_mean_sentence(name, known)
        super().__init__(
            f"limit {name!r} does not exist.{hint} The session's limits are {_listing(known)}"
        )


class NameConflict(PosekitError):
    """A task or limit of this name already exists in the session."""


class TakeNotFound(NotFound):
    """The session has no take of this id (or none is being recorded)."""


class TakeConflict(NameConflict):
    """A take is being recorded already, or its id is taken, or it is of another robot."""


class SessionLimitReached(PosekitError):
    """The server already runs its maximum number of sessions."""


class StackFull(PosekitError):
    """The change would put more in the session's stack than a session may hold."""

    code = "stack_full"

    def __init__(self, what: str, count: int, maximum: int) -> None:
        super().__init__(
            f"a session holds at most {maximum} {what} and this one would hold {count}; "
            "remove some first"
        )
        self.count = count
        self.maximum = maximum


class TaskLimitReached(StackFull):
    """The session already holds its maximum number of tasks."""

    code = "too_many_tasks"

    def __init__(self, count: int, maximum: int) -> None:
        super().__init__("tasks", count, maximum)


class LimitCapReached(StackFull):
    """The session already holds its maximum number of limits."""

    code = "too_many_limits"

    def __init__(self, count: int, maximum: int) -> None:
        super().__init__("limits", count, maximum)


class CollisionPairsCapReached(StackFull):
    """The session's collision-avoidance limits would check too many geom pairs."""

    code = "too_many_collision_pairs"

    def __init__(self, count: int, maximum: int) -> None:
        super().__init__("collision pairs", count, maximum)


class NotOwner(PosekitError):
    """Another replica of the cluster solves this session (it holds the session's lease),
    or this replica lost the lease while serving the request. Nothing changed here: the
    request can be sent again, and the proxy sends it on to another replica."""

    def __init__(self, session_id: str, owner: str | None) -> None:
        where = f"replica {owner!r}" if owner else "another replica"
        super().__init__(
            f"session {session_id!r} is solved by {where}; this replica changed nothing, "
            "send the request again"
        )
        self.session_id = session_id
        self.owner = owner


class DatabaseUnavailable(PosekitError):
    """The database of the sessions cannot be reached: a change that could not be
    stored is not acknowledged."""


class StorageFailed(PosekitError):
    """The session store could not write (the disk or database is full, read-only or
    failing): the change is not acknowledged, and the session is left as it was."""

    def __init__(self, cause: str, full: bool) -> None:
        self.full = full
        self.cause = f"the session store {'is full' if full else 'cannot write'} ({cause})"
        retry = ", try again once the server has space" if full else ""
        super().__init__(f"{self.cause}; nothing was changed{retry}")


class InvalidRequest(PosekitError, ValueError):
    """A request is well-formed but does not fit the session (e.g. a target field the
    task type does not take)."""


def known_names(names: Iterable[str]) -> str:
    """``names`` quoted as a short list, for messages."""
    return _listing(names)
