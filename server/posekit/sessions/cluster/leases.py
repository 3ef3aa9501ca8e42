"""Who solves a session: the lease protocol, and the one replica that needs none.

In a cluster (several replicas on one PostgreSQL database, :mod:`.postgres_leases`) a
replica solves a session only while it holds the session's *lease*: an owner (the
replica's id), an expiry (on the database's clock) and a fencing *epoch* that grows by
one every time the lease changes hands. The owner renews its leases; a save carries the
epoch and is refused once the lease is someone else's, so two replicas never both
advance a session, even when one of them was paused past its lease.

A single replica (no database, or SQLite) holds every session it knows:
:class:`LocalLeases` does nothing, and the manager behaves exactly as without leases.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from posekit.sessions.errors import SessionNotFound


def default_replica_id() -> str:
    """``<host name>-<pid>-<4 random hex digits>``: unique per process, readable in logs."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(2)}"


class TakenSession(NamedTuple):
    """A stored session whose lease a replica just took: what restores it."""

    session_id: str
    spec: dict[str, Any]
    revision: int
    created: float
    """When it was first stored [s since the epoch, database clock]."""


@dataclass(frozen=True)
class ClusterEntry:
    """A stored session as the whole cluster sees it (for listings).

    Attributes:
        session_id, spec: The session and its stored spec.
        created: When it was first stored [s since the epoch, database clock].
        owner: The replica holding its lease (None: none; it is stored only).
        live: Whether that lease is unexpired (some replica solves it now).
    """

    session_id: str
    spec: dict[str, Any]
    created: float
    owner: str | None
    live: bool


class Leases(Protocol):
    """The leases of one replica (module docstring)."""

    replica_id: str
    clustered: bool
    """False: a single replica, no lease logic at all."""
    ttl_s: float
    """A lease's lifetime [s] (on the database's clock)."""
    takeovers: int
    """Leases this replica took from another replica (or an expired one) since it started."""
    renew_failures: int
    """Renewals that failed (database errors) or found leases lost, since it started."""

    def start(self) -> None:
        """Create or migrate the database's tables (idempotent)."""

    def close(self) -> None:
        """Close the database connections."""

    def create(self, session_id: str) -> None:
        """Take the lease of a new session (epoch 1)."""

    def take(self, session_id: str) -> TakenSession:
        """Take the lease of a stored session whose lease is free, expired or this
        replica's (its epoch grows by one) and return the session as stored.

        Raises :class:`~posekit.sessions.errors.NotOwner` when another replica holds an
        unexpired lease, :class:`SessionNotFound` when no such session is stored."""

    def sweep(self, limit: int) -> list[TakenSession]:
        """Take at most ``limit`` expired leases of other replicas (or of this one's
        previous run) and return their sessions as stored."""

    def renew(self) -> list[str]:
        """Extend every lease held; the sessions whose lease was lost (they are forgotten)."""

    def release(self, session_id: str, *, dormant: bool) -> None:
        """Give a held lease up: ``dormant`` (an idle session, stored only) nobody takes it
        until a request names it; else it expires at once and any replica's sweep takes
        it. Errors are logged, not raised."""

    def release_all(self) -> None:
        """Let every held lease expire at once (clean shutdown: others take them over)."""

    def forget(self, session_id: str) -> None:
        """Stop holding the session's lease locally (lost, or the session is gone)."""

    def held(self) -> set[str]:
        """The sessions whose lease this replica holds."""

    def refusal(self, session_id: str) -> Exception:
        """Why a save of a held session was refused: :class:`NotOwner` (the lease is
        lost), :class:`SessionNotFound` (deleted) or ``DatabaseUnavailable``."""

    def listing(self) -> Iterable[ClusterEntry]:
        """Every stored session of the cluster, oldest first."""


class LocalLeases:
    """A single replica: it holds every session, and never takes or loses one."""

    clustered = False
    ttl_s = 5.0
    takeovers = 0
    renew_failures = 0

    def __init__(self, replica_id: str | None = None) -> None:
        self.replica_id = replica_id or default_replica_id()

    def start(self) -> None:
        return None

    def close(self) -> None:
        return None

    def create(self, session_id: str) -> None:
        return None

    def take(self, session_id: str) -> TakenSession:
        raise SessionNotFound(session_id)

    def sweep(self, limit: int) -> list[TakenSession]:
        return []

    def renew(self) -> list[str]:
        return []

    def release(self, session_id: str, *, dormant: bool) -> None:
        return None

    def release_all(self) -> None:
        return None

    def forget(self, session_id: str) -> None:
        return None

    def held(self) -> set[str]:
        return set()

    def refusal(self, session_id: str) -> Exception:
        return SessionNotFound(session_id)

    def listing(self) -> Iterable[ClusterEntry]:
        return ()
