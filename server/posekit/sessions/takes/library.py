"""Each session's takes: held in memory, and in the session store when it keeps takes.

A take is stored when its recording stops, or when it is uploaded, before the request
is answered (:class:`StorageFailed` when the store cannot write: the take is not
kept); a session's takes are read from the store the first time they are asked for
(after a restart), and deleted with the session. A session keeps ``max_takes`` at most.
"""

from __future__ import annotations

import threading

from pydantic import ValidationError

from posekit.sessions.errors import InvalidRequest, TakeConflict, TakeNotFound
from posekit.sessions.store.protocol import TakeStore
from posekit.sessions.takes.take import Take, TakeInfo

MAX_TAKES = 20


class TakeLibrary:
    """The takes of every session of a manager (module docstring)."""

    def __init__(self, store: object, max_takes: int = MAX_TAKES) -> None:
        self._store = store if isinstance(store, TakeStore) else None
        self.max_takes = max_takes
        self._takes: dict[str, dict[str, Take]] = {}
        self._lock = threading.Lock()

    def infos(self, session_id: str) -> list[TakeInfo]:
        """The session's takes, oldest first."""
        return [take.info() for take in self._of(session_id).values()]

    def get(self, session_id: str, take_id: str) -> Take:
        take = self._of(session_id).get(take_id)
        if take is None:
            known = ", ".join(repr(t) for t in self._of(session_id)) or "none"
            raise TakeNotFound(f"take {take_id!r} does not exist; the session's takes: {known}")
        return take

    def add(self, session_id: str, robot: str, take: Take) -> TakeInfo:
        """Keep and store a take of the session's ``robot`` (:class:`TakeConflict` for
        another robot's, a taken id or a full library)."""
        if take.start.robot != robot:
            raise TakeConflict(
                f"the take is of robot {take.start.robot!r}; this session runs {robot!r}"
            )
        takes = self._of(session_id)
        with self._lock:
            if take.id in takes:
                raise TakeConflict(f"a take {take.id!r} exists; delete it or give another id")
            if len(takes) >= self.max_takes:
                raise TakeConflict(
                    f"the session keeps {self.max_takes} takes at most; delete one first"
                )
            if self._store is not None:
                self._store.save_take(session_id, take.id, take.model_dump(mode="json"))
            takes[take.id] = take
        return take.info()

    def delete(self, session_id: str, take_id: str) -> None:
        self.get(session_id, take_id)
        takes = self._of(session_id)
        with self._lock:
            if self._store is not None:
                self._store.delete_take(session_id, take_id)
            takes.pop(take_id, None)

    def forget(self, session_id: str) -> None:
        """The session is gone (the store deleted its takes with it)."""
        with self._lock:
            self._takes.pop(session_id, None)

    def _of(self, session_id: str) -> dict[str, Take]:
        """The session's takes, read from the store the first time."""
        with self._lock:
            takes = self._takes.get(session_id)
            if takes is not None:
                return takes
            stored = self._store.load_takes(session_id) if self._store is not None else []
            takes = self._takes[session_id] = {}
            for raw in stored:
                try:
                    take = Take.model_validate(raw)
                except ValidationError as exc:  # a take this posekit cannot read
                    raise InvalidRequest(f"a stored take cannot be read: {exc}") from None
                takes[take.id] = take
            return takes
