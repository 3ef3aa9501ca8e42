"""Deployment settings, read from ``POSEKIT_*`` environment variables.

| variable | default | meaning |
| --- | --- | --- |
| ``POSEKIT_HOST`` | ``127.0.0.1`` | interface to listen on (``0.0.0.0`` in Docker) |
| ``POSEKIT_PORT`` | ``8000`` | port |
| ``POSEKIT_DB`` | unset | SQLite file of the sessions; unset = nothing persisted |
| ``POSEKIT_TOKEN`` | unset | access token; unset = open access |
| ``POSEKIT_CORS_ORIGINS`` | unset | comma-separated allowed origins; unset = CORS closed |
| ``POSEKIT_MAX_SESSIONS`` | ``100`` | live sessions at most (429 beyond) |
| ``POSEKIT_MAX_TASKS`` | ``64`` | tasks per session at most (409 beyond) |
| ``POSEKIT_MAX_BODY_BYTES`` | ``1048576`` | request body size at most (413 beyond) |
| ``POSEKIT_WS_MAX_BYTES`` | ``65536`` | API stream message size at most (refused with an error reply) |
| ``POSEKIT_WS_RATE`` | ``120`` | websocket messages per second per client, bursts of 1 s (refused beyond; 0 = no limit) |
| ``POSEKIT_IDLE_UNLOAD_S`` | ``600`` | unload sessions idle this long; revived on use (0 = never) |
| ``POSEKIT_SOLVER_PROCESSES`` | ``1`` | processes that solve the sessions (0 = a thread of the server process) |
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields


class SettingsError(ValueError):
    """An environment variable has a value that cannot be used."""


@dataclass(frozen=True)
class Settings:
    """posekit's deployment settings (see the module docstring)."""

    host: str = "127.0.0.1"
    port: int = 8000
    db: str | None = None
    token: str | None = None
    cors_origins: tuple[str, ...] = ()
    max_sessions: int = 100
    max_tasks: int = 64
    max_body_bytes: int = 1 << 20
    ws_max_bytes: int = 1 << 16
    ws_rate: float = 120.0
    idle_unload_s: float = 600.0
    solver_processes: int = 1

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``POSEKIT_*`` variables; unknown values raise :class:`SettingsError`."""
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for field in fields(cls):
            raw = env.get(f"POSEKIT_{field.name.upper()}")
            if raw is None or raw.strip() == "":
                continue
            values[field.name] = _parse(field.name, raw.strip(), field.type)
        return cls(**values)  # type: ignore[arg-type]


ZERO_ALLOWED = frozenset({"solver_processes"})  # integer settings for which 0 means "none"


def _parse(name: str, raw: str, kind: object) -> object:
    variable = f"POSEKIT_{name.upper()}"
    if name == "cors_origins":
        return tuple(origin.strip() for origin in raw.split(",") if origin.strip())
    if kind in ("int", int):
        try:
            value = int(raw)
        except ValueError:
            raise SettingsError(f"{variable} must be an integer, got {raw!r}") from None
        least = 0 if name in ZERO_ALLOWED else 1
        if value < least:
            raise SettingsError(f"{variable} must be >= {least}, got {value}")
        return value
    if kind in ("float", float):
        try:
            number = float(raw)
        except ValueError:
            raise SettingsError(f"{variable} must be a number, got {raw!r}") from None
        if number < 0 or number != number:
            raise SettingsError(f"{variable} must be a number >= 0, got {raw!r}")
        return number
    return raw
