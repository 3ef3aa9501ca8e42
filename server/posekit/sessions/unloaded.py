"""Sessions kept as their spec, not live: unloaded after being idle, or unavailable."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from posekit.sessions.live.info import SessionInfo

UNLOADED = "unloaded"
UNAVAILABLE = "unavailable"


@dataclass(frozen=True)
class UnloadedSession:
    """A session kept as its spec — unloaded after being idle, or stored but not
    restorable right now (``unavailable``, e.g. its robot cannot be loaded): what
    revives it and what lists it."""

    spec: dict[str, Any]
    summary: SessionInfo
