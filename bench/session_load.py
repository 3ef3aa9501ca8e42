"""What ``bench/server_load.py``'s clients are told and what each records: the kinds of
sessions, the clients' behaviour, one client's measurements (shared by its two client
implementations, :mod:`websockets_client` and :mod:`lean_client`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TARGET_HZ = 20.0


@dataclass(frozen=True)
class Kind:
    """Sessions of one group: robot, the task the client drags, extra limits."""

    group: str
    robot: str
    task: str
    limits: tuple[dict[str, Any], ...] = ()


LIGHT = Kind("light (arm7)", "arm7", "ee")


@dataclass(frozen=True)
class ClientMode:
    """How the clients behave: the states' encoding they ask for, how often they send a
    target, and whether they wait for the answer to their previous target (``polite``:
    a tick whose previous target is unanswered sends nothing)."""

    encoding: str = "json"
    target_hz: float = TARGET_HZ
    polite: bool = False
    clients: str = "websockets"


@dataclass
class SessionLoad:
    """What one client measured on its session."""

    session_id: str
    center: list[float]
    kind: Kind = LIGHT
    sent: dict[int, float] = field(default_factory=dict)
    next_ref: int = 0  # first ref whose latency is not measured yet
    states: int = 0
    throttled: int = 0  # states that said the session was throttled
    latencies: list[float] = field(default_factory=list)
    streaming: bool = False  # a state came (the client is connected and served)
    measuring: bool = False
    first_revision: int | None = None  # of the first state received while measuring
    last_revision: int = 0  # of the last one
