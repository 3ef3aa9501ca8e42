"""Errors of the robot registry; they derive from the engine's :class:`PosekitError`."""

from __future__ import annotations

import errno
from collections.abc import Sequence

from posekit.ik.exceptions import PosekitError
from posekit.ik.near_miss import did_you_mean


class RobotNotFound(PosekitError, LookupError):
    """No built-in or Menagerie robot has this name, or the robot has no such entry."""

    def __init__(self, name: str, known: Sequence[str], what: str = "robot") -> None:
        hint = did_you_mean(name, known)
        listed = ", ".join(repr(k) for k in list(known)[:12])
        more = f", … ({len(known) - 12} more)" if len(known) > 12 else ""
        super().__init__(f"{what} {name!r} does not exist{hint} (known: [{listed}{more}])")
        self.name = name


class RobotUnavailable(PosekitError):
    """A known robot's model could not be fetched (Menagerie download or cache failure)."""


class RobotLoadError(PosekitError):
    """A robot's model file exists but MuJoCo cannot compile it."""


class RobotFileInvalid(RobotLoadError):
    """A robot's files cannot be served: malformed XML, a reference outside the
    upload, a model MuJoCo cannot compile (its message names the file relative to the
    upload, never a server path)."""


class UploadTooLarge(PosekitError):
    """An upload (archive, one of its files, their total, or the compiled model) is
    over a size cap."""


class RobotConflict(PosekitError):
    """The robot cannot be added or removed as asked: its name is taken, it is not an
    uploaded robot, or sessions use it."""


class TooManyRobots(PosekitError):
    """The server already keeps its maximum number of uploaded robots."""


class UploadsBusy(PosekitError):
    """Another upload is being checked: this one is refused at once, to be sent again."""


class RobotInUse(RobotConflict):
    """An uploaded robot cannot be deleted while sessions (live or unloaded) use it."""


class DiskFull(PosekitError):
    """The server's disk filled up while an upload was written: nothing of it is kept."""

    def __init__(self) -> None:
        super().__init__(
            "the server's disk is full: the upload was not kept; try again once there is space"
        )


def raise_if_full(error: OSError) -> None:
    """:class:`DiskFull` when ``error`` says the disk (or the user's quota) is full."""
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        raise DiskFull() from error
