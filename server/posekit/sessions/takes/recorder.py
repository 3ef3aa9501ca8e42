"""Recording a take while a session runs (the session calls it under its lock)."""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel

from posekit.sessions.specs.session_spec import SessionSpec
from posekit.sessions.takes.take import (
    MAX_EVENTS,
    AddLimitEvent,
    AddTaskEvent,
    LimitEvent,
    QEvent,
    RemoveLimitEvent,
    RemoveTaskEvent,
    SolverEvent,
    Take,
    TargetEvent,
    TaskEvent,
)

EVENTS: dict[str, type[BaseModel]] = {
    "target": TargetEvent,
    "task": TaskEvent,
    "limit": LimitEvent,
    "q": QEvent,
    "solver": SolverEvent,
    "add_task": AddTaskEvent,
    "remove_task": RemoveTaskEvent,
    "add_limit": AddLimitEvent,
    "remove_limit": RemoveLimitEvent,
}


class TakeRecorder:
    """The take being recorded: its start, the steps taken and the inputs since.

    Inputs past :data:`MAX_EVENTS` are not kept (``full`` says so in the take's name)."""

    def __init__(self, take_id: str, name: str, start: SessionSpec) -> None:
        self.take_id, self.name, self.start = take_id, name, start
        self.created = time.time()
        self._began = time.monotonic()
        self.steps = 0
        self.events: list[Any] = []
        self.full = False

    def record(self, kind: str, **fields: Any) -> None:
        """An input the session accepted (already validated: built without checks)."""
        if len(self.events) >= MAX_EVENTS:
            self.full = True
            return
        t = time.monotonic() - self._began
        self.events.append(EVENTS[kind].model_construct(kind=kind, step=self.steps, t=t, **fields))

    def stepped(self) -> None:
        """The session solved a step."""
        self.steps += 1

    def take(self) -> Take:
        """The take as recorded so far."""
        return Take.model_construct(
            id=self.take_id,
            name=self.name + (" (inputs past the limit were not kept)" if self.full else ""),
            created=self.created,
            steps=self.steps,
            seconds=time.monotonic() - self._began,
            start=self.start,
            events=list(self.events),
        )
