"""The core of the session manager: its sessions, live and unloaded, and what they share.

A :class:`ManagerCore` holds the live sessions and the unloaded ones (kept as their
spec) under one lock, the caps on how many there may be, the robot registry, the solve
loop, the leases and the ordered saves (:mod:`~posekit.sessions.persistence`), the
session-closed listeners, and the two threads that keep them: the lease keeper
(:mod:`~posekit.sessions.lease_keeper`) and the housekeeper
(:mod:`~posekit.sessions.housekeeping`).

What the threads and the cluster side call and the manager itself provides (taking
and dropping sessions by their leases, unloading idle ones, retrying unavailable ones,
creating sessions) is declared abstract here:
:class:`~posekit.sessions.ownership.ClusterOwnership` and
:class:`~posekit.sessions.manager.SessionManager`, the subclasses, implement it.
Create managers as :class:`SessionManager`.
"""

from __future__ import annotations

import logging
import secrets
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any

from posekit.robots import RobotRegistry
from posekit.sessions.caps import StackCaps
from posekit.sessions.errors import SessionLimitReached
from posekit.sessions.housekeeping import Housekeeper
from posekit.sessions.lease_keeper import LeaseKeeper
from posekit.sessions.leases import Leases, LocalLeases, TakenSession
from posekit.sessions.loops.scheduler import Scheduler
from posekit.sessions.loops.solve_loop import SolveLoop
from posekit.sessions.persistence import Persistence, Snapshot
from posekit.sessions.session import Session
from posekit.sessions.session_spec import CreateSession
from posekit.sessions.store import NullStore, SessionStore
from posekit.sessions.unloaded import UnloadedSession
from posekit.settings import Settings

logger = logging.getLogger(__name__)

DEFAULT_MAX_SESSIONS: int = Settings.model_fields["max_sessions"].default
ID_BYTES = 12  # 96 random bits: session ids cannot be guessed


class ManagerCore(ABC):
    """A session manager's sessions and shared parts (module docstring); its arguments
    are :class:`~posekit.sessions.manager.SessionManager`'s."""

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
        flush_interval: float = 0.5,
        solve_loop: SolveLoop | None = None,
        leases: Leases | None = None,
    ) -> None:
        self.registry = registry if registry is not None else RobotRegistry()
        self.store: SessionStore = store if store is not None else NullStore()
        self.max_sessions = max_sessions
        self.max_stored_sessions = max_stored_sessions
        self.max_tasks = max_tasks
        self.caps = StackCaps(max_tasks, max_limits, max_collision_pairs)
        self.idle_unload_s = idle_unload_s
        self.solve_loop: SolveLoop = solve_loop if solve_loop is not None else Scheduler()
        self._sessions: dict[str, Session] = {}
        self._unloaded: dict[str, UnloadedSession] = {}
        self._close_listeners: list[Callable[[str], None]] = []
        self._lock = threading.Lock()
        self._revive_lock = threading.Lock()
        self._persistence = Persistence(self.store)
        self._housekeeper = Housekeeper(self, flush_interval)
        self._started = False
        self.leases: Leases = leases if leases is not None else LocalLeases()
        self.keeper = LeaseKeeper(self.leases, self, self.leases.ttl_s)
        """Renews the leases and takes over expired ones (in a cluster, once started)."""

    # -------------------------------------------------------------- sessions
    def save_now(self, session: Session) -> bool:
        """Store the session as it is now (in order with every other save of it); True
        when stored."""
        return self._persistence.save(session.id, self._snapshot(session))

    def sessions(self) -> list[Session]:
        """Live sessions, oldest first."""
        return sorted(self._sessions.values(), key=lambda s: s.created)

    def unloaded(self) -> list[UnloadedSession]:
        """Sessions unloaded after being idle, oldest first (revived by :meth:`get`)."""
        with self._lock:
            return sorted(self._unloaded.values(), key=lambda u: u.summary.created)

    def on_session_closed(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(session_id)`` after a session is deleted or unloaded."""
        self._close_listeners.append(listener)

    def count(self) -> int:
        """Number of live sessions (the manager defines no ``__len__``: an empty manager
        must stay truthy in ``manager or SessionManager()``)."""
        return len(self._sessions)

    def _check_capacity(self) -> None:
        if len(self._sessions) >= self.max_sessions:
            raise SessionLimitReached(
                f"this server already runs {len(self._sessions)} sessions (the maximum is "
                f"{self.max_sessions}); delete one first"
            )

    def _check_stored_capacity(self) -> None:
        stored = len(self._sessions) + len(self._unloaded)
        if self.max_stored_sessions is not None and stored >= self.max_stored_sessions:
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

    # ----------------------------------------------------------- persistence
    def _mark_dirty(self, session: Session) -> None:
        self._persistence.mark_dirty(session.id)

    @staticmethod
    def _snapshot(session: Session) -> Snapshot:
        return lambda: session.spec().model_dump(mode="json")

    def flush(self) -> None:
        """Store every live session changed since the last flush."""
        self._persistence.flush(
            lambda sid: self._snapshot(s) if (s := self._sessions.get(sid)) is not None else None
        )

    # ------------------------------------------------- provided by subclasses
    @abstractmethod
    def _create(
        self,
        request: CreateSession | Mapping[str, Any] | None,
        session_id: str | None,
        reviving: bool,
    ) -> Session:
        """Build and register a session; ``reviving`` replaces its unloaded entry."""

    @abstractmethod
    def unload_idle(self) -> list[str]:
        """Unload the idle sessions; the ids unloaded."""

    @abstractmethod
    def retry_unavailable(self) -> None:
        """Try again to restore the sessions listed as unavailable."""

    @abstractmethod
    def adopt_swept(
        self, take: Callable[[int], list[TakenSession]]
    ) -> list[tuple[str, Exception | None]]:
        """Take expired leases with ``take(room)`` and solve their sessions."""

    @abstractmethod
    def drop(self, session_id: str, reason: str) -> None:
        """Stop solving a session here without saving it."""

    @abstractmethod
    def room(self) -> int:
        """How many more live sessions this replica may solve."""
