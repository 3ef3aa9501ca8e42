"""The session manager: creates, finds and deletes sessions; owns the solver.

New sessions start from a robot (its default keyframe, its default preset tasks and
the joint-range limit) or from a full portable spec. The manager also unloads idle
sessions: a session nobody watches and nobody used for ``idle_unload_s`` seconds is
closed and kept as its portable spec (in memory, and in the store when there is one);
the next request for it revives it under the same id, in the same state.

Persistence (:mod:`posekit.sessions.store.persistence`, ordered saves and final
deletes): a session is stored when it is created, a change made through
:meth:`SessionManager.edit` is stored before ``edit`` returns (the API acknowledges a
REST change only then), other changes (websocket targets, viewer drags, solved q) are
stored within ``flush_interval`` seconds (and a flush), a delete is final, and a clean shutdown stores
every live session.

Which sessions this replica may solve is its ownership strategy's
(:mod:`posekit.sessions.cluster.ownership`): all of them on one machine, those whose
lease it holds in a cluster.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from posekit.robots import RobotRegistry
from posekit.sessions.cluster.lease_keeper import LeaseKeeper
from posekit.sessions.cluster.leases import Leases, LocalLeases
from posekit.sessions.cluster.ownership import ClusterOwnership, LocalOwnership, Ownership
from posekit.sessions.errors import (
    InvalidRequest,
    SessionLimitReached,
    SessionNotFound,
    StorageFailed,
)
from posekit.sessions.housekeeping import Housekeeper
from posekit.sessions.live.error_message import ErrorMessage
from posekit.sessions.live.info import SessionInfo
from posekit.sessions.live.session import Session
from posekit.sessions.solving.solver import Solver
from posekit.sessions.specs.caps import StackCaps
from posekit.sessions.specs.initial_spec import initial_spec
from posekit.sessions.specs.session_spec import (
    CREATE_SESSION,
    CreateSession,
    NewSession,
    RestoreSession,
)
from posekit.sessions.store.persistence import Persistence
from posekit.sessions.store.protocol import NullStore, SessionStore
from posekit.sessions.takes.library import TakeLibrary
from posekit.sessions.unloaded import UNAVAILABLE, UNLOADED, UnloadedSession
from posekit.settings import Settings

logger = logging.getLogger(__name__)

DEFAULT_MAX_SESSIONS: int = Settings.model_fields["max_sessions"].default
ID_BYTES = 12  # 96 random bits: session ids cannot be guessed
FLUSH_INTERVAL_S = 0.25
"""[s] between two flushes: a websocket change is stored within 0.5 s, the promise, with
room for a slow flush (at 0.5 s, kill -9 rounds lost changes answered 0.45 s before)."""
KEPT = "they are kept here and stored once the store can write (a restart before then loses them)"


class SessionManager:
    """All live sessions of a server.

    Args:
        registry: Where robots come from (built-ins + Menagerie by default).
        store: Persistence hook; :class:`NullStore` (nothing persisted) by default.
        max_sessions: Live sessions at most; creating or reviving more is refused
            (:class:`SessionLimitReached`).
        max_stored_sessions: Sessions at most, live and unloaded together; creating
            more is refused (nothing is ever dropped to make room). None: no limit.
        max_tasks: Tasks per session at most (:class:`TaskLimitReached` beyond); None
            for no limit. ``max_limits`` and ``max_collision_pairs`` likewise for limits
            and the geom pairs of collision avoidance (409 beyond).
        idle_unload_s: Unload sessions without watchers that nobody used for this
            many seconds (0: never).
        flush_interval: Seconds between two saves of a changed session (and between
            two checks for idle sessions; :mod:`~posekit.sessions.housekeeping`).
        solver: What steps the sessions; a new :class:`Solver` by default.
        leases: Which sessions this replica may solve (:class:`LocalLeases`, all of
            them, by default); in a cluster the caps above count this replica's sessions.

    Use :meth:`start` / :meth:`shutdown`, or ``with SessionManager() as manager:``.
    """

    def __init__(
        self,
        registry: RobotRegistry | None = None,
        store: SessionStore | None = None,
        *,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        max_stored_sessions: int | None = None,
        max_tasks: int | None = None,
        max_limits: int | None = None,
        max_collision_pairs: int | None = None,
        idle_unload_s: float = 0.0,
        flush_interval: float = FLUSH_INTERVAL_S,
        solver: Solver | None = None,
        leases: Leases | None = None,
    ) -> None:
        self.registry = registry if registry is not None else RobotRegistry()
        self.store: SessionStore = store if store is not None else NullStore()
        self.max_sessions = max_sessions
        self.max_stored_sessions = max_stored_sessions
        self.caps = StackCaps(max_tasks, max_limits, max_collision_pairs)
        self.idle_unload_s = idle_unload_s
        self.solver = solver if solver is not None else Solver()
        self.leases: Leases = leases if leases is not None else LocalLeases()
        self._sessions: dict[str, Session] = {}
        self._unloaded: dict[str, UnloadedSession] = {}
        self._close_listeners: list[Callable[[str], None]] = []
        self._lock = threading.Lock()
        self._revive_lock = threading.Lock()
        self._persistence = Persistence(self.store)
        self.takes = TakeLibrary(self.store)
        """Every session's recorded and uploaded takes."""
        self._housekeeper = Housekeeper(self, flush_interval)
        self._started = False
        self.ownership: Ownership = LocalOwnership()
        self.keeper: LeaseKeeper | None = None
        """Renews the leases and takes over expired ones (in a cluster, once started)."""
        if self.leases.clustered:
            cluster = ClusterOwnership(self.leases, self, self._persistence, self._revive_lock)
            self.ownership, self.keeper = (
                cluster,
                LeaseKeeper(self.leases, cluster, self.leases.ttl_s),
            )

    # ------------------------------------------------------------- lifecycle
    def start(self) -> None:
        """Start the solver and restore the sessions of the store (idempotent)."""
        if self._started:
            return
        self._started = True
        self.solver.start()
        self.leases.start()
        if self.keeper is not None:  # its sweep takes the sessions no replica solves
            self.keeper.start()
        else:
            for stored in self._persistence.load():
                self._restore_stored(stored.session_id, stored.spec)
        self._housekeeper.start()

    def shutdown(self) -> None:
        """Store every live session, end every subscription and stop the solver.

        Sessions stay in the store: a restart restores them.
        """
        self._started = False
        if self.keeper is not None:
            self.keeper.stop()
        self._housekeeper.stop()
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            session.close("server shutting down")
            self.save_now(session)
        self.leases.release_all()
        self.leases.close()
        self.solver.stop()

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
            self._check_capacity(new=session_id is None)
        new, session_id = session_id is None, session_id or self._new_id()
        on_change = self._mark_dirty if self._persistence.enabled else None
        session = Session(
            session_id, spec, model, entry, solver=self.solver, on_change=on_change, caps=self.caps
        )
        with self._lock:
            self._check_capacity(new=False)
            if session_id in self._sessions or (session_id in self._unloaded and not reviving):
                raise InvalidRequest(f"session id {session_id!r} is taken")
            self._sessions[session_id] = session
            self._unloaded.pop(session_id, None)
        if new:
            self.ownership.created(session)
        try:
            self.ownership.confirm_stored(session, self.save_now(session))
        except StorageFailed:
            if not new:  # a stored session coming back: its stored spec stands
                self._mark_dirty(session)
            else:
                with self._lock:
                    self._sessions.pop(session_id, None)
                session.close("the session could not be stored")
                raise
        self.solver.attach(session)
        return session

    def get(self, session_id: str) -> Session:
        """The session with this id (revived if it was unloaded), or :class:`SessionNotFound`.

        Counts as a use of the session. Reviving may compile the robot model: call from
        a worker thread, not from an event loop.
        """
        session = self.live(session_id)
        if session is not None:
            return session
        with self._lock:
            unloaded = session_id in self._unloaded
        return self._revive(session_id) if unloaded else self.ownership.take_over(session_id)

    @contextmanager
    def edit(self, session_id: str) -> Iterator[Session]:
        """The session with this id, to change; stored when the block ends without an
        error, before ``edit`` returns (a rejected change changed nothing: no save).

        The API wraps every REST change in it, so an acknowledged change is stored; when
        the store cannot write (:class:`StorageFailed`) the session is put back as it was
        before the change and the error raised.
        """
        session = self.get(session_id)
        before = session.spec() if self._persistence.enabled else None  # for a rollback
        yield session
        try:
            saved = self.save_now(session)
        except StorageFailed:
            if before is not None:
                session.replace_spec(before)
            raise
        self.ownership.confirm_stored(session, saved)

    def delete(self, session_id: str) -> None:
        """Stop and forget a session (its watchers are told, and the store forgets it).
        A takeover of the same session (which would restore it) never overlaps."""
        with self._revive_lock:
            with self._lock:
                known = session_id in self._sessions or session_id in self._unloaded
            if not known:
                self.ownership.take_to_delete(session_id)
            self._persistence.delete(session_id)  # StorageFailed: nothing deleted
            with self._lock:
                session = self._sessions.pop(session_id, None)
                self._unloaded.pop(session_id, None)
            if session is not None:
                session.close("session deleted")
            self.takes.forget(session_id)
            self._notify_closed(session_id)

    def sessions(self) -> list[Session]:
        """Live sessions, oldest first."""
        return sorted(self._sessions.values(), key=lambda s: s.created)

    def unloaded(self) -> list[UnloadedSession]:
        """Sessions unloaded after being idle, oldest first (revived by :meth:`get`)."""
        with self._lock:
            return sorted(self._unloaded.values(), key=lambda u: u.summary.created)

    def listing(self) -> list[SessionInfo]:
        """Every session, oldest first: live and unloaded ones here; in a cluster, also
        those of the other replicas (from the store, with their owner)."""
        local = [s.summary() for s in self.sessions()] + [u.summary for u in self.unloaded()]
        return self.ownership.listing(local)

    def count(self) -> int:
        """Number of live sessions (the manager defines no ``__len__``: an empty manager
        must stay truthy in ``manager or SessionManager()``)."""
        return len(self._sessions)

    def on_session_closed(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(session_id)`` after a session is deleted or unloaded."""
        self._close_listeners.append(listener)

    # --------------------------------------------- what the ownership asks of it
    def live(self, session_id: str) -> Session | None:
        """The live session of this id (its use recorded), if any."""
        with self._lock:
            session = self._sessions.get(session_id)
        if session is not None:
            session.touch()
        return session

    def room(self) -> int:
        """How many more live sessions this replica may solve."""
        return max(0, self.max_sessions - len(self._sessions))

    def restore(self, session_id: str, spec: dict[str, Any], created: float) -> Session:
        """Make a live session of a stored spec under its id (created at ``created``)."""
        session = self._create({"spec": spec}, session_id, reviving=True)
        session.created = created
        return session

    def discard(self, session_id: str, reason: str) -> bool:
        """Close the live session of this id without saving it; whether there was one."""
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is None:
            return False
        session.close(reason)
        self._notify_closed(session_id)
        return True

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
        cutoff = time.monotonic() - self.idle_unload_s
        kept: list[tuple[str, dict[str, Any]]] = []
        with self._revive_lock, self._lock:  # a revival waits for the spec to be stored
            for session in list(self._sessions.values()):
                if session.watchers or session.last_used > cutoff:
                    continue
                session.close("session unloaded after being idle; open it again to revive it")
                spec = session.spec().model_dump(mode="json")
                if not self.leases.clustered:
                    summary = replace(session.summary(), status=UNLOADED, watchers=0)
                    self._unloaded[session.id] = UnloadedSession(spec, summary)
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
            session = self.live(session_id)
            if session is not None:
                return session
            with self._lock:
                unloaded = self._unloaded.get(session_id)
            if unloaded is None:
                raise SessionNotFound(session_id)
            session = self.restore(session_id, unloaded.spec, unloaded.summary.created)
            logger.info("revived session %s", session_id)
            return session

    def _restore_stored(self, session_id: str, spec: dict[str, Any]) -> None:
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

    # ----------------------------------------------------------- persistence
    def save_now(self, session: Session) -> bool:
        """Store the session as it is now (in order with every other save of it); True
        when stored."""
        return self._persistence.save(session.id, lambda: session.spec().model_dump(mode="json"))

    def flush(self) -> None:
        """Store every live session changed since the last flush."""

        def snapshot(session_id: str) -> Callable[[], dict[str, Any]] | None:
            session = self._sessions.get(session_id)
            return None if session is None else lambda: session.spec().model_dump(mode="json")

        self._persistence.flush(snapshot, self._tell_not_stored)

    def _tell_not_stored(self, session_id: str, failure: StorageFailed) -> None:
        """Tell a session's watchers that their changes are not being stored."""
        session = self._sessions.get(session_id)
        if session is not None:
            code = "storage_full" if failure.full else "storage_unavailable"
            message = f"your latest changes are not stored: {failure.cause}; {KEPT}"
            session.tell(ErrorMessage(code=code, message=message))

    def _mark_dirty(self, session: Session) -> None:
        self._persistence.mark_dirty(session.id)

    # ---------------------------------------------------------------- helpers
    def _check_capacity(self, new: bool) -> None:
        """:class:`SessionLimitReached` when no live session (``new``: and no stored
        one) may be added (lock held)."""
        if len(self._sessions) >= self.max_sessions:
            raise SessionLimitReached(
                f"this server already runs {len(self._sessions)} sessions (the maximum is "
                f"{self.max_sessions}); delete one first"
            )
        stored = len(self._sessions) + len(self._unloaded)
        if new and self.max_stored_sessions is not None and stored >= self.max_stored_sessions:
            raise SessionLimitReached(
                f"this server keeps {stored} sessions, {len(self._unloaded)} of them "
                f"unloaded (the maximum is {self.max_stored_sessions}); delete one first"
            )

    def _new_id(self) -> str:
        while True:
            session_id = secrets.token_urlsafe(ID_BYTES)
            if session_id not in self._sessions and session_id not in self._unloaded:
                return session_id

    def _notify_closed(self, session_id: str) -> None:
        for listener in self._close_listeners:
            try:
                listener(session_id)
            except Exception:
                logger.exception("session-closed listener failed for %s", session_id)
