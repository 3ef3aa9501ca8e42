"""How much one session's task stack may hold, so one client cannot starve the others."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StackCaps:
    """Per-session capacities (None: no limit).

    Attributes:
        max_tasks: Tasks in the stack.
        max_limits: Limits in the stack.
        max_collision_pairs: Geom pairs checked by all collision-avoidance limits together
            (each pair is a distance query per step).
    """

    max_tasks: int | None = None
    max_limits: int | None = None
    max_collision_pairs: int | None = None


UNLIMITED = StackCaps()
