"""The session manager: creates, finds and deletes sessions; owns the solve loop.

New sessions start from a robot (its default keyframe, its default preset tasks and
the joint-range limit) or from a full portable spec. The manager also unloads idle
sessions: a session nobody watches and nobody used for ``idle_unload_s`` seconds is
closed and kept as its portable spec (in memory, and in the store when there is one);
the next request for it revives it under the same id, in the same state.

Persistence (:mod:`posekit.sessions.persistence`, ordered saves and final deletes): a
session is stored when it is created, a change made through :meth:`SessionManager.edit`
is stored before ``edit`` returns (the API acknowledges a REST change only then), other
changes (websocket targets, viewer drags, solved q) are stored within
``flush_interval`` seconds, a delete is final, and a clean shutdown stores every live
session.

In a cluster it solves only the sessions whose lease it holds
(:mod:`posekit.sessions.ownership`); without one, no lease logic runs at all. The
sessions, live and unloaded, and what they share (caps, saves, listeners, the lease
keeper and the housekeeping thread) are its core, :mod:`posekit.sessions.manager_core`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from posekit.sessions.errors import InvalidRequest, SessionNotFound
from posekit.sessions.info import SessionInfo
from posekit.sessions.initial_spec import initial_spec
from posekit.sessions.ownership import ClusterOwnership
from posekit.sessions.session import Session
from posekit.sessions.session_spec import CREATE_SESSION, CreateSession, NewSession, RestoreSession
from posekit.sessions.unloaded import UNAVAILABLE, UNLOADED, UnloadedSession

logger = logging.getLogger(__name__)


class SessionManager(ClusterOwnership):
    """All live sessions of a server.

    Args:
        registry: Where robots come from (built-ins + Menagerie by default).
        store: Persistence hook; :class:`NullStore` (nothing persisted) by default.
        max_sessions: Live sessions at most; creating or reviving more is refused
            (:class:`SessionLimitReached`).
        max_stored_sessions: Sessions at most, live and unloaded together; creating
            more is refused (:class:`SessionLimitReached`; nothing is ever dropped to
            make room). None: no limit.
        max_tasks: Tasks per session at most (:class:`TaskLimitReached` beyond); None
            for no limit. ``max_limits`` and ``max_collision_pairs`` likewise for limits
            and the geom pairs of collision avoidance (409 beyond).
        idle_unload_s: Unload sessions without watchers that nobody used for this
            many seconds (0: never).
        flush_interval: Seconds between two saves of a changed session (and between
            two checks for idle sessions; :mod:`~posekit.sessions.housekeeping`).
        solve_loop: What steps the sessions: a :class:`Scheduler` thread in this process
            by default, or :class:`~posekit.sessions.loops.solver_processes.SolverProcesses`.
        leases: Which sessions this replica may solve (:class:`LocalLeases`, all of
            them, by default); in a cluster the caps above count this replica's sessions.

    Use :meth:`start` / :meth:`shutdown`, or ``with SessionManager() as manager:``.
    """

    # ------------------------------------------------------------- lifecycle
    def start(self) -> None:
        """Start the solve loop and restore the sessions of the store (idempotent)."""
        if self._started:
            return
        self._started = True
        self.solve_loop.start()
        self.leases.start()
        if self.leases.clustered:  # the sweep takes the sessions no replica solves
            self.keeper.start()
        else:
            for stored in self._persistence.load():
                self._restore(stored.session_id, stored.spec)
        self._housekeeper.start()

    def shutdown(self) -> None:
        """Store every live session, end every subscription and stop the solve loop.

        Sessions stay in the store: a restart restores them.
        """
        self._started = False
        self.keeper.stop()
        self._housekeeper.stop()
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            session.close("server shutting down")
            self.save_now(session)
        self.leases.release_all()
        self.leases.close()
        self.solve_loop.stop()

    def __enter__(self) -> SessionManager:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # -------------------------------------------------------------- sessions
    def create(
        self,
        request: CreateSession | Mapping[str, Any] | None = None,
        *,
        session_id: str | None = None,
    ) -> Session:
        """Create a session (see :class:`CreateSession`); it starts solving at once.

        Loading a Menagerie robot the first time may download it: call from a worker
        thread, not from an event loop.
        """
        return self._create(request, session_id, reviving=False)

    def _create(
        self,
        request: CreateSession | Mapping[str, Any] | None,
        session_id: str | None,
        reviving: bool,
    ) -> Session:
        """Build and register a session; ``reviving`` replaces its unloaded entry."""
        if request is None:
            request = NewSession()
        elif not isinstance(request, NewSession | RestoreSession):  # a JSON-like mapping
            request = CREATE_SESSION.validate_python(request)
        spec, model, entry = initial_spec(self.registry, request)
        with self._lock:
            self._check_capacity()
            if session_id is None:
                self._check_stored_capacity()
        new, session_id = session_id is None, session_id or self._new_id()
        session = Session(
            session_id,
            spec,
            model,
            entry,
            scheduler=self.solve_loop,
            on_change=self._mark_dirty if self._persistence.enabled else None,
            caps=self.caps,
        )
        with self._lock:
            self._check_capacity()
            if session_id in self._sessions or (session_id in self._unloaded and not reviving):
                raise InvalidRequest(f"session id {session_id!r} is taken")
            self._sessions[session_id] = session
            self._unloaded.pop(session_id, None)
        if new:
            self._lease_new(session)
        self._confirm_stored(session, self.save_now(session))
        self.solve_loop.attach(session)
        return session

    def get(self, session_id: str) -> Session:
        """The session with this id (revived if it was unloaded), or :class:`SessionNotFound`.

        Counts as a use of the session. Reviving may compile the robot model: call from
        a worker thread, not from an event loop.
        """
        with self._lock:
            session = self._sessions.get(session_id)
            if session is not None:
                session.touch()
                return session
            unloaded = session_id in self._unloaded
        if not unloaded and self.leases.clustered:
            return self._take_over(session_id)
        return self._revive(session_id)

    @contextmanager
    def edit(self, session_id: str) -> Iterator[Session]:
        """The session with this id, to change; stored when the block ends without an
        error, before ``edit`` returns (a rejected change changed nothing: no save).

        The API wraps every REST change in it, so an acknowledged change is stored.
        """
        session = self.get(session_id)
        yield session
        self._confirm_stored(session, self.save_now(session))

    def delete(self, session_id: str) -> None:
        """Stop and forget a session (its watchers are told, and the store forgets it)."""
        with self._exclusive_in_cluster():
            with self._lock:
                session = self._sessions.pop(session_id, None)
                unloaded = self._unloaded.pop(session_id, None)
            if session is None and unloaded is None:
                self._take_to_delete(session_id)
            if session is not None:
                session.close("session deleted")
            try:
                self._persistence.delete(session_id)
            finally:
                self._notify_closed(session_id)

    # ------------------------------------------------------- idle sessions
    def unload_idle(self) -> list[str]:
        """Unload every session without watchers unused for ``idle_unload_s`` seconds.

        Returns the ids unloaded. A session is closed and its spec kept under the
        manager's lock, so a concurrent :meth:`get` either sees it live (and its use
        keeps it loaded) or revives it from the kept spec. In a cluster the spec is kept
        in the store only, and the lease freed: any replica revives it on request.
        """
        if self.idle_unload_s <= 0:
            return []
        with self._revive_lock:  # a revival waits for the spec to be stored
            return self._unload_idle(time.monotonic() - self.idle_unload_s)

    def _unload_idle(self, cutoff: float) -> list[str]:
        kept: list[tuple[str, dict[str, Any]]] = []
        with self._lock:
            for session in list(self._sessions.values()):
                if session.watchers or session.last_used > cutoff:
                    continue
                session.close("session unloaded after being idle; open it again to revive it")
                spec = session.spec().model_dump(mode="json")
                if not self.leases.clustered:
                    self._unloaded[session.id] = UnloadedSession(
                        spec, replace(session.summary(), status=UNLOADED, watchers=0)
                    )
                del self._sessions[session.id]
                kept.append((session.id, spec))
        for session_id, spec in kept:
            self._persistence.save(session_id, lambda spec=spec: spec)  # type: ignore[misc]
            self.leases.release(session_id, dormant=True)
            self._notify_closed(session_id)
            logger.info("unloaded idle session %s", session_id)
        return [session_id for session_id, _ in kept]

    def _revive(self, session_id: str) -> Session:
        """Recreate an unloaded session from its spec; it stays listed as unloaded (and
        concurrent requests wait here) until the new session is registered."""
        with self._revive_lock:
            with self._lock:
                session = self._sessions.get(session_id)
                if session is not None:
                    session.touch()
                    return session
                unloaded = self._unloaded.get(session_id)
            if unloaded is None:
                raise SessionNotFound(session_id)
            session = self._create({"spec": unloaded.spec}, session_id, reviving=True)
            session.created = unloaded.summary.created
            logger.info("revived session %s", session_id)
            return session

    def _restore(self, session_id: str, spec: dict[str, Any]) -> None:
        """Restore a stored session; one that cannot be restored now (its robot is
        unavailable, its spec no longer fits the model) is kept, listed as
        ``unavailable`` with the reason, and tried again later and on every request."""
        try:
            self.create({"spec": spec}, session_id=session_id)
        except Exception as exc:  # a stale spec must not stop the server
            logger.warning("session %s stays stored, unavailable: %s", session_id, exc)
            summary = SessionInfo.stored(session_id, spec, UNAVAILABLE, str(exc))
            with self._lock:
                self._unloaded[session_id] = UnloadedSession(spec, summary)

    def retry_unavailable(self) -> None:
        """Try again to restore the sessions listed as unavailable."""
        for unloaded in self.unloaded():
            if unloaded.summary.status == UNAVAILABLE:
                try:
                    self._revive(unloaded.summary.id)
                except Exception as exc:
                    logger.info("session %s still unavailable: %s", unloaded.summary.id, exc)
