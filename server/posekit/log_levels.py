"""The log levels ``posekit up --log-level`` and ``POSEKIT_LOG_LEVEL`` take (a module
of its own so that the command line knows them without the server's packages)."""

from typing import Literal

LogLevel = Literal["debug", "info", "warning", "error", "critical"]
