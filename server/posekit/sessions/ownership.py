"""The cluster half of the session manager: taking, adopting and dropping sessions by
their leases (:mod:`posekit.sessions.leases`), and the cluster-wide listing.

:class:`ClusterOwnership` is a part of :class:`~posekit.sessions.manager.SessionManager`
(its base, built on :class:`~posekit.sessions.manager_core.ManagerCore`: the sessions
and their lock); with :class:`LocalLeases` none of its paths is taken except
:meth:`~ClusterOwnership.listing`'s local one.

Rules (README, "Running several replicas"):

- a request for a session not live here takes its lease when it is free or expired
  (epoch + 1) and restores it from the store; while another replica holds an unexpired
  lease it raises :class:`NotOwner` and changes nothing;
- a change is acknowledged only once stored: a save refused because the lease is lost
  drops the session here (unsaved) and raises why;
- a lost lease (found by the renewal) drops the session here at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from posekit.sessions.errors import SessionNotFound
from posekit.sessions.info import SessionInfo
from posekit.sessions.leases import TakenSession
from posekit.sessions.listing import cluster_listing
from posekit.sessions.manager_core import ManagerCore
from posekit.sessions.session import Session

logger = logging.getLogger(__name__)


class ClusterOwnership(ManagerCore):
    """Lease-driven ownership of sessions, for the session manager (module docstring)."""

    def _take_over(self, session_id: str) -> Session:
        """Take the lease of a session stored but solved nowhere here, and restore it
        (:class:`NotOwner` while another replica holds it: nothing changes)."""
        with self._revive_lock:
            with self._lock:
                session = self._sessions.get(session_id)
                if session is not None:
                    session.touch()
                    return session
                full = len(self._sessions) >= self.max_sessions
            if full:  # 503, not 429: the proxy tries a replica with room
                raise self.leases.refusal(session_id)
            return self._adopt(self.leases.take(session_id))

    def _lease_new(self, session: Session) -> None:
        """Take the lease of a session just created (epoch 1); when it cannot be taken,
        the session is dropped and the error raised."""
        try:
            self.leases.create(session.id)
        except Exception:
            self.drop(session.id, "its lease could not be taken")
            raise

    def _exclusive_in_cluster(self) -> AbstractContextManager[object]:
        """In a cluster, the revive lock: a delete and a takeover of the same session
        (which would restore it from the store while it is deleted) never overlap."""
        return self._revive_lock if self.leases.clustered else nullcontext()

    def _take_to_delete(self, session_id: str) -> None:
        """Before deleting a session not live here: take its lease (in a cluster; the
        caller holds :meth:`_exclusive_in_cluster`)."""
        if not self.leases.clustered:
            raise SessionNotFound(session_id)
        stored = self.leases.take(session_id)
        self._persistence.resume(session_id, stored.revision)

    def adopt_swept(
        self, take: Callable[[int], list[TakenSession]]
    ) -> list[tuple[str, Exception | None]]:
        """The lease keeper's sweep: take expired leases with ``take(room)`` and solve
        their sessions, holding the revive lock from the taking to the last restore. A
        request for one of them meanwhile waits, then finds it live; without the lock it
        would take the lease a second time (epoch + 2) and the sweep's restore would
        close its copy. Each session's id and why it could not be restored (None: solved
        here now)."""
        adopted: list[tuple[str, Exception | None]] = []
        with self._revive_lock:
            for stored in take(self.room()):
                try:
                    self._adopt(stored)
                except Exception as error:
                    adopted.append((stored.session_id, error))
                else:
                    adopted.append((stored.session_id, None))
        return adopted

    def _adopt(self, stored: TakenSession) -> Session:
        """Restore a session whose lease is held (caller holds the revive lock); when it
        cannot be restored here, its lease is freed and the error raised."""
        session_id = stored.session_id
        with self._lock:
            stale = self._sessions.pop(session_id, None)
        if stale is not None:  # a copy from an older lease of this replica
            stale.close("the session was restored from the store")
        self._persistence.resume(session_id, stored.revision)
        try:
            session = self._create({"spec": stored.spec}, session_id, reviving=True)
        except Exception:
            self._persistence.forget(session_id)
            self.leases.release(session_id, dormant=True)
            raise
        session.created = stored.created
        logger.info("solving session %s (lease taken by %s)", session_id, self.leases.replica_id)
        return session

    def drop(self, session_id: str, reason: str) -> None:
        """Stop solving a session here without saving it (its lease is lost: another
        replica's copy is the session now)."""
        self.leases.forget(session_id)
        self._persistence.forget(session_id)
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is not None:
            session.close(reason)
            self._notify_closed(session_id)

    def room(self) -> int:
        """How many more live sessions this replica may solve."""
        return max(0, self.max_sessions - len(self._sessions))

    def _confirm_stored(self, session: Session, stored: bool) -> None:
        """In a cluster, a change is acknowledged only once stored: when the save was
        refused (the lease is lost, the database is unreachable) the session is dropped
        here and the reason raised."""
        if stored or not self.leases.clustered:
            return
        reason = self.leases.refusal(session.id)
        self.drop(session.id, "the session moved to another replica")
        raise reason

    def listing(self) -> list[SessionInfo]:
        """Every session, oldest first: live and unloaded ones here; in a cluster, also
        those of the other replicas (from the store, with their owner)."""
        local = [s.summary() for s in self.sessions()] + [u.summary for u in self.unloaded()]
        if self.leases.clustered:
            return cluster_listing(local, self.leases)
        return sorted(local, key=lambda info: info.created)
