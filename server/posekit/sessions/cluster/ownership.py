"""Who solves a session: this replica alone, or the holder of its lease in a cluster.

The manager is given one of two strategies (built from its leases by
:func:`ownership_of`):

- :class:`LocalOwnership`: one replica, every session is its own; nothing to take.
- :class:`ClusterOwnership`: sessions by their leases (:mod:`posekit.sessions.cluster.leases`).
  A request for a session not live here takes its lease when it is free or expired
  (epoch + 1) and restores it from the store; while another replica holds an unexpired
  lease it raises :class:`NotOwner` and changes nothing. A change is acknowledged only
  once stored: a save refused because the lease is lost drops the session here
  (unsaved) and raises why. A lost lease (found by the renewal) drops the session here
  at once (README, "Several replicas").
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol

from posekit.sessions.cluster.leases import Leases, TakenSession
from posekit.sessions.cluster.listing import cluster_listing
from posekit.sessions.errors import SessionNotFound
from posekit.sessions.live.info import SessionInfo
from posekit.sessions.live.session import Session
from posekit.sessions.store.persistence import Persistence

logger = logging.getLogger(__name__)


class Host(Protocol):
    """What an ownership strategy asks of the manager it serves."""

    def live(self, session_id: str) -> Session | None:
        """The live session of this id (its use recorded), if any."""

    def room(self) -> int:
        """How many more live sessions this replica may solve."""

    def restore(self, session_id: str, spec: dict[str, Any], created: float) -> Session:
        """Make a live session of a stored spec, under its id."""

    def discard(self, session_id: str, reason: str) -> bool:
        """Close the live session of this id without saving it; whether there was one."""


class Ownership(Protocol):
    """The manager's strategy for the sessions it may solve (module docstring)."""

    def take_over(self, session_id: str) -> Session:
        """A session not live here, made live here (:class:`SessionNotFound`, or why not)."""

    def created(self, session: Session) -> None:
        """A session was just created here."""

    def take_to_delete(self, session_id: str) -> None:
        """Before a session not live here is deleted (:class:`SessionNotFound`: nowhere)."""

    def confirm_stored(self, session: Session, stored: bool) -> None:
        """A change of ``session`` was saved (``stored``) or refused: acknowledge or raise."""

    def listing(self, local: list[SessionInfo]) -> list[SessionInfo]:
        """Every session, oldest first, from this replica's ``local`` ones."""


class LocalOwnership:
    """One replica: every session is live here or nowhere."""

    def take_over(self, session_id: str) -> Session:
        raise SessionNotFound(session_id)

    def created(self, session: Session) -> None:
        pass

    def take_to_delete(self, session_id: str) -> None:
        raise SessionNotFound(session_id)

    def confirm_stored(self, session: Session, stored: bool) -> None:
        pass

    def listing(self, local: list[SessionInfo]) -> list[SessionInfo]:
        return sorted(local, key=lambda info: info.created)


class ClusterOwnership:
    """Sessions by their leases (module docstring).

    Args:
        leases: This replica's leases.
        host: The manager.
        persistence: The manager's ordered saves (resumed at a taken lease's revision).
        lock: The manager's revive lock: takings, sweeps, unloads and deletes of a
            session never overlap.
    """

    def __init__(
        self, leases: Leases, host: Host, persistence: Persistence, lock: threading.Lock
    ) -> None:
        self.leases = leases
        self.host = host
        self.persistence = persistence
        self.lock = lock

    def take_over(self, session_id: str) -> Session:
        """Take the lease of a session stored but solved nowhere here, and restore it
        (:class:`NotOwner` while another replica holds it: nothing changes)."""
        with self.lock:
            session = self.host.live(session_id)
            if session is not None:
                return session
            if self.host.room() <= 0:  # 503, not 429: the proxy tries a replica with room
                raise self.leases.refusal(session_id)
            return self._adopt(self.leases.take(session_id))

    def created(self, session: Session) -> None:
        """Take the lease of a session just created (epoch 1); when it cannot be taken,
        the session is dropped and the error raised."""
        try:
            self.leases.create(session.id)
        except Exception:
            self.drop(session.id, "its lease could not be taken")
            raise

    def take_to_delete(self, session_id: str) -> None:
        """Take the lease of a session to delete that is not live here (the caller
        holds the lock)."""
        stored = self.leases.take(session_id)
        self.persistence.resume(session_id, stored.revision)

    def adopt_swept(
        self, take: Callable[[int], list[TakenSession]]
    ) -> list[tuple[str, Exception | None]]:
        """The lease keeper's sweep: take expired leases with ``take(room)`` and solve
        their sessions, holding the lock from the taking to the last restore (a request
        for one of them meanwhile waits, then finds it live, instead of taking its lease
        a second time). Each session's id and why it could not be restored (None: it is
        solved here now)."""
        adopted: list[tuple[str, Exception | None]] = []
        with self.lock:
            for stored in take(self.host.room()):
                try:
                    self._adopt(stored)
                except Exception as error:
                    adopted.append((stored.session_id, error))
                else:
                    adopted.append((stored.session_id, None))
        return adopted

    def _adopt(self, stored: TakenSession) -> Session:
        """Restore a session whose lease is held (lock held); when it cannot be
        restored here, its lease is freed and the error raised."""
        session_id = stored.session_id
        self.host.discard(session_id, "the session was restored from the store")
        self.persistence.resume(session_id, stored.revision)
        try:
            session = self.host.restore(session_id, stored.spec, stored.created)
        except Exception:
            self.persistence.forget(session_id)
            self.leases.release(session_id, dormant=True)
            raise
        logger.info("solving session %s (lease taken by %s)", session_id, self.leases.replica_id)
        return session

    def drop(self, session_id: str, reason: str) -> None:
        """Stop solving a session here without saving it (its lease is lost: another
        replica's copy is the session now)."""
        self.leases.forget(session_id)
        self.persistence.forget(session_id)
        self.host.discard(session_id, reason)

    def confirm_stored(self, session: Session, stored: bool) -> None:
        """A change is acknowledged only once stored: when the save was refused (the
        lease is lost, the database is unreachable) the session is dropped here and the
        reason raised."""
        if stored:
            return
        reason = self.leases.refusal(session.id)
        self.drop(session.id, "the session moved to another replica")
        raise reason

    def listing(self, local: list[SessionInfo]) -> list[SessionInfo]:
        """This replica's sessions and those of the others (from the store, with their
        owner), oldest first."""
        return cluster_listing(local, self.leases)
