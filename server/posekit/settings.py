"""Deployment settings, read from ``POSEKIT_*`` environment variables (pydantic-settings).

This is the one place where posekit's deployment defaults live; the rest of the code
takes them from a :class:`Settings` (or as required arguments).

| variable | default | meaning |
| --- | --- | --- |
| ``POSEKIT_HOST`` | ``127.0.0.1`` | interface to listen on (``0.0.0.0`` in Docker) |
| ``POSEKIT_PORT`` | ``8000`` | port |
| ``POSEKIT_DB`` | unset | SQLite file of the sessions, or a ``postgresql://…`` URL (a cluster of replicas: leases, README "Running several replicas"); unset = nothing persisted |
| ``POSEKIT_DB_SCHEMA`` | unset | PostgreSQL schema of posekit's tables (created when missing); unset = the URL's ``search_path`` (``public``) |
| ``POSEKIT_REPLICA_ID`` | host name, pid and 4 random hex digits | this replica's name in the leases, ``/api/health`` and ``X-Posekit-Owner`` (unique per running replica) |
| ``POSEKIT_LEASE_TTL_S`` | ``5`` | lifetime of a session's lease on PostgreSQL's clock [s]; renewed every third of it |
| ``POSEKIT_TOKEN`` | unset | access token; unset = open access |
| ``POSEKIT_CORS_ORIGINS`` | unset | comma-separated allowed origins; unset = CORS closed |
| ``POSEKIT_ALLOWED_HOSTS`` | unset | comma-separated ``Host`` names served (``*`` = any); unset = the loopback names when bound to loopback, else any |
| ``POSEKIT_TRUST_PROXY`` | ``false`` | honour ``X-Forwarded-Proto`` (behind a TLS proxy: the token cookie is then ``Secure``) |
| ``POSEKIT_MAX_SESSIONS`` | ``100`` | live sessions at most (429 beyond); in a cluster, per replica |
| ``POSEKIT_MAX_STORED_SESSIONS`` | ``1000`` | sessions kept at most, live and unloaded together (429 beyond; none is ever dropped); in a cluster, the replica's live ones (the cluster's stored ones are not capped) |
| ``POSEKIT_MAX_TASKS`` | ``64`` | tasks per session at most (409 beyond) |
| ``POSEKIT_MAX_LIMITS`` | ``16`` | limits per session at most (409 beyond) |
| ``POSEKIT_MAX_COLLISION_PAIRS`` | ``2048`` | geom pairs checked by a session's collision limits together (409 beyond) |
| ``POSEKIT_MAX_BODY_BYTES`` | ``1048576`` | request body size at most (413 beyond) |
| ``POSEKIT_WS_MAX_BYTES`` | ``65536`` | API stream message size at most (refused with an error reply) |
| ``POSEKIT_WS_RATE`` | ``120`` | websocket messages per second per client, bursts of 1 s (refused beyond; 0 = no limit) |
| ``POSEKIT_WS_TOKEN_RATE`` | ``0`` | … and per access token, all its clients together (the server's token, or everyone without one; 0 = no limit) |
| ``POSEKIT_IDLE_UNLOAD_S`` | ``600`` | unload sessions idle this long; revived on use (0 = never) |
| ``POSEKIT_MODEL_CACHE_MODELS`` | ``8`` | compiled robot models kept for quick re-use once no session uses them, at most |
| ``POSEKIT_MODEL_CACHE_MB`` | ``512`` | … and at most this many MB of them together |
| ``POSEKIT_MODEL_CACHE_IDLE_S`` | ``60`` | … each for at most this many seconds after it was last used |
| ``POSEKIT_SOLVE_CAPACITY`` | ``0.5`` | seconds of solving per second the solver gives its sessions before the heaviest are throttled (0 = never throttle) |
| ``POSEKIT_ROBOTS_DIR`` | unset | folder of MJCF/URDF robots to serve (source ``local``), live-reloaded |
| ``POSEKIT_ROBOT_FILE`` | unset | one MJCF/URDF file to serve (``posekit up FILE``; the first session is on it) |
| ``POSEKIT_DATA_DIR`` | the folder of ``POSEKIT_DB``, else a temporary folder | where uploaded robots are stored (``robots/``) |
| ``POSEKIT_MAX_UPLOADED_ROBOTS`` | ``20`` | uploaded robots kept at most (409 beyond) |
| ``POSEKIT_UPLOAD_MAX_BYTES`` | ``67108864`` | an upload (zip or file) at most (413 beyond) |
| ``POSEKIT_UPLOAD_MAX_FILE_BYTES`` | ``134217728`` | each unpacked file at most (413 beyond) |
| ``POSEKIT_UPLOAD_MAX_TOTAL_BYTES`` | ``268435456`` | an upload's unpacked files together at most (413 beyond) |
| ``POSEKIT_UPLOAD_MAX_FILES`` | ``2000`` | files and folders in an upload at most (413 beyond) |
| ``POSEKIT_ROBOT_MAX_BODIES`` | ``1000`` | bodies of an uploaded model at most (413 beyond) |
| ``POSEKIT_ROBOT_MAX_GEOMS`` | ``10000`` | geoms of an uploaded model at most (413 beyond) |
| ``POSEKIT_ROBOT_MAX_MESH_VERTICES`` | ``2000000`` | mesh vertices of an uploaded model at most (413 beyond) |
| ``POSEKIT_ROBOT_MAX_DOFS`` | ``256`` | joint DoF (nv) of an uploaded model at most (413 beyond) |
| ``POSEKIT_ROBOT_MAX_HFIELD_SAMPLES`` | ``4000000`` | height-field samples of an uploaded model at most (413 beyond) |
| ``POSEKIT_ROBOT_MAX_TEXTURE_BYTES`` | ``67108864`` | texture bytes of an uploaded model at most (413 beyond) |
| ``POSEKIT_ROBOT_COMPILE_TIMEOUT_S`` | ``30`` | time an uploaded model has to compile, in a child process (422 beyond) |
| ``POSEKIT_UPLOAD_AT_ONCE`` | ``1`` | uploads checked at the same time, each in a compile child of its own (429 ``uploads_busy`` with ``Retry-After`` beyond) |
| ``POSEKIT_MAX_STEP_MS`` | ``10`` | CPU time of an IK step at most [ms]: an uploaded robot whose default tasks step slower is refused (413); a session whose steps take longer is paused (0 = neither) |
| ``POSEKIT_MENAGERIE_DOWNLOAD`` | ``true`` | download a Menagerie robot that is neither under ``MENAGERIE_ROOT`` nor in the download cache (``MENAGERIE_CACHE_DIR``); ``false``: such a robot is unavailable (503) at once |
| ``POSEKIT_LOG_LEVEL`` | ``info`` | ``debug``, ``info``, ``warning``, ``error`` or ``critical`` (``posekit up --log-level``) |
| ``POSEKIT_LOG_FORMAT`` | ``auto`` | ``text`` (readable lines), ``json`` (one object per line) or ``auto``: text when stderr is a terminal, else JSON |

A blank variable means its default, except ``POSEKIT_TOKEN``: a blank token is refused
(it would silently mean open access).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from posekit.log_levels import LogLevel
from posekit.robots.compile_check import ModelCaps
from posekit.robots.model_cache import CacheLimits
from posekit.robots.safe_archive import ArchiveLimits
from posekit.robots.uploads import UploadLimits

ENV_PREFIX = "POSEKIT_"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
LogFormat = Literal["auto", "text", "json"]


class SettingsError(ValueError):
    """An environment variable has a value that cannot be used."""


class Settings(BaseSettings):
    """posekit's deployment settings (see the module docstring); read them with
    :meth:`from_env`."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_ignore_empty=True, frozen=True)

    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535)
    db: str | None = None
    db_schema: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
    replica_id: str | None = Field(None, pattern=r"^[A-Za-z0-9._-]{1,128}$")
    lease_ttl_s: float = Field(5.0, ge=0.3, le=300.0, allow_inf_nan=False)
    token: str | None = None
    cors_origins: Annotated[tuple[str, ...], NoDecode] = ()
    allowed_hosts: Annotated[tuple[str, ...], NoDecode] = ()
    trust_proxy: bool = False
    max_sessions: int = Field(100, ge=1)
    max_stored_sessions: int = Field(1000, ge=1)
    max_tasks: int = Field(64, ge=1)
    max_limits: int = Field(16, ge=1)
    max_collision_pairs: int = Field(2048, ge=1)
    max_body_bytes: int = Field(1 << 20, ge=1)
    ws_max_bytes: int = Field(1 << 16, ge=1)
    ws_rate: float = Field(120.0, ge=0.0, allow_inf_nan=False)
    ws_token_rate: float = Field(0.0, ge=0.0, allow_inf_nan=False)
    idle_unload_s: float = Field(600.0, ge=0.0, allow_inf_nan=False)
    solve_capacity: float = Field(0.5, ge=0.0, allow_inf_nan=False)
    model_cache_models: int = Field(8, ge=0)
    model_cache_mb: float = Field(512.0, ge=0.0, allow_inf_nan=False)
    model_cache_idle_s: float = Field(60.0, ge=0.0, allow_inf_nan=False)
    robots_dir: str | None = None
    robot_file: str | None = None
    data_dir: str | None = None
    max_uploaded_robots: int = Field(20, ge=0)
    upload_max_bytes: int = Field(64 << 20, ge=1)
    upload_max_file_bytes: int = Field(128 << 20, ge=1)
    upload_max_total_bytes: int = Field(256 << 20, ge=1)
    upload_max_files: int = Field(2000, ge=1)
    robot_max_bodies: int = Field(1000, ge=1)
    robot_max_geoms: int = Field(10_000, ge=1)
    robot_max_mesh_vertices: int = Field(2_000_000, ge=0)
    robot_max_dofs: int = Field(256, ge=1)
    robot_max_hfield_samples: int = Field(4_000_000, ge=0)
    robot_max_texture_bytes: int = Field(64 << 20, ge=0)
    robot_compile_timeout_s: float = Field(30.0, gt=0.0, allow_inf_nan=False)
    upload_at_once: int = Field(1, ge=1, le=64)
    max_step_ms: float = Field(10.0, ge=0.0, allow_inf_nan=False)
    menagerie_download: bool = True
    log_level: LogLevel = "info"
    log_format: LogFormat = "auto"

    @field_validator("log_level", "log_format", mode="before")
    @classmethod
    def _lower_case(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Only the values given: :meth:`from_env` reads the environment it is handed,
        so ``Settings.from_env({})`` is the defaults whatever the process's variables."""
        return (init_settings,)

    @field_validator("cors_origins", "allowed_hosts", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(item.strip() for item in value.split(",") if item.strip())
        return value

    @field_validator("token")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be blank (unset it for open access)")
        return value

    def served_hosts(self) -> list[str]:
        """The ``Host`` names to serve: the configured ones, else the loopback names when
        bound to loopback (a tokenless local server cannot be reached through DNS
        rebinding), else any."""
        if self.allowed_hosts:
            return list(self.allowed_hosts)
        if self.host in LOOPBACK_HOSTS:
            return sorted(LOOPBACK_HOSTS)
        return ["*"]

    def cache_limits(self) -> CacheLimits:
        """How many unused compiled models each process keeps."""
        return CacheLimits(self.model_cache_models, self.model_cache_mb, self.model_cache_idle_s)

    def upload_limits(self) -> UploadLimits:
        """Caps on uploaded robots (count, archive, files, model size, compile time)."""
        return UploadLimits(
            robots=self.max_uploaded_robots,
            archive=ArchiveLimits(
                self.upload_max_file_bytes, self.upload_max_total_bytes, self.upload_max_files
            ),
            model=ModelCaps(
                self.robot_max_bodies,
                self.robot_max_geoms,
                self.robot_max_mesh_vertices,
                self.robot_max_dofs,
                self.robot_max_hfield_samples,
                self.robot_max_texture_bytes,
                self.max_step_ms,
            ),
            compile_timeout_s=self.robot_compile_timeout_s,
            at_once=self.upload_at_once,
        )

    def data_path(self) -> Path | None:
        """Where uploaded robots are stored: ``POSEKIT_DATA_DIR``, else the folder of
        ``POSEKIT_DB``; None when neither is set (a temporary folder, gone at exit)."""
        if self.data_dir:
            return Path(self.data_dir).expanduser()
        if self.db and not self.clustered():
            return Path(self.db).expanduser().resolve().parent
        return None

    def clustered(self) -> bool:
        """Whether ``POSEKIT_DB`` is a PostgreSQL URL (several replicas may share it)."""
        return bool(self.db) and str(self.db).startswith(("postgresql://", "postgres://"))

    def max_step_s(self) -> float:
        """The solver's budget of a session's step [s] (``inf``: none)."""
        return self.max_step_ms / 1e3 or math.inf

    def fair_share_capacity(self) -> float:
        """The capacity of each solve loop's fair share (``inf``: never throttle)."""
        return self.solve_capacity or math.inf

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``POSEKIT_*`` variables of ``environ`` (default: the process's);
        a value that cannot be used raises :class:`SettingsError` naming the variable."""
        env = os.environ if environ is None else environ
        values = {
            name: raw.strip()
            for name in cls.model_fields
            if (raw := env.get(f"{ENV_PREFIX}{name.upper()}")) is not None
            and (raw.strip() or name == "token")
        }
        try:
            return cls.model_validate(values)
        except ValidationError as error:
            problems = [
                f"{ENV_PREFIX}{str(e['loc'][0]).upper()} {_requirement(e)}, got {e.get('input')!r}"
                for e in error.errors()
            ]
            raise SettingsError("; ".join(problems)) from None


def _requirement(error: Any) -> str:
    """What a pydantic error asks for, in words (``must be >= 1``, ``must be an integer``)."""
    context = error.get("ctx") or {}
    if "ge" in context:
        return f"must be >= {context['ge']}"
    if "le" in context:
        return f"must be <= {context['le']}"
    if error["type"].startswith("int"):
        return "must be an integer"
    if error["type"].startswith(("float", "finite")):
        return "must be a number >= 0"
    if error["type"] == "value_error":
        return str(context.get("error", error["msg"]))
    return f"is invalid ({error['msg']})"
