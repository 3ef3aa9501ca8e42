"""The store contract, for every store: saves land in revision order, deletes are final,
and concurrent writers cannot break either (issue: a late snapshot overwrote a newer
one, and a save in flight brought a deleted session back).

PostgreSQL's store also fences its writes by the leases of the cluster; here one replica
takes each session's lease on its first save, so the contract is that of a replica that
owns every session it writes (the fencing itself: ``tests/sessions/test_leases.py``).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from posekit.sessions.cluster.postgres_leases import PostgresLeases
from posekit.sessions.store.postgres_database import PostgresDatabase
from posekit.sessions.store.postgres_store import PostgresStore
from posekit.sessions.store.protocol import MemoryStore, SessionStore, StoredSession
from posekit.sessions.store.sqlite_store import SQLiteStore


class OwningReplica:
    """A PostgreSQL store written by one replica that takes each session's lease the
    first time it saves or deletes it (as the manager does: it holds a session's lease
    before it saves or deletes it)."""

    kind = "postgresql"

    def __init__(self, url: str) -> None:
        self.database = PostgresDatabase(url)
        self.leases = PostgresLeases(self.database, "contract-replica", ttl_s=60.0)
        self.leases.start()
        self.store = PostgresStore(self.database, self.leases)
        self._lock = threading.Lock()
        self._leased: set[str] = set()

    def _lease(self, session_id: str) -> None:
        with self._lock:
            if session_id not in self._leased:
                self.leases.create(session_id)
                self._leased.add(session_id)

    def save_session(self, session_id: str, spec: dict[str, Any], revision: int) -> bool:
        self._lease(session_id)
        return self.store.save_session(session_id, spec, revision)

    def delete_session(self, session_id: str) -> None:
        self._lease(session_id)
        self.store.delete_session(session_id)

    def load_all(self) -> Iterable[StoredSession]:
        return self.store.load_all()

    def ping(self) -> bool:
        return self.store.ping()

    def save_take(self, session_id: str, take_id: str, take: dict[str, Any]) -> None:
        self.store.save_take(session_id, take_id, take)

    def load_takes(self, session_id: str) -> list[dict[str, Any]]:
        return self.store.load_takes(session_id)

    def delete_take(self, session_id: str, take_id: str) -> None:
        self.store.delete_take(session_id, take_id)


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionStore]:
    if request.param == "memory":
        yield MemoryStore()
    elif request.param == "sqlite":
        yield SQLiteStore(tmp_path / "posekit.sqlite3")
    else:
        replica = OwningReplica(request.getfixturevalue("postgres_url"))
        yield replica
        replica.database.close()


def test_an_older_revision_never_overwrites_a_newer_one(store: SessionStore) -> None:
    assert store.save_session("s", {"v": 2}, 2)
    assert not store.save_session("s", {"v": 1}, 1)  # late: refused
    assert not store.save_session("s", {"v": 2.5}, 2)  # not newer: refused
    assert store.save_session("s", {"v": 3}, 3)
    assert [(s.session_id, s.spec, s.revision) for s in store.load_all()] == [("s", {"v": 3}, 3)]


def test_a_delete_is_final(store: SessionStore) -> None:
    store.save_session("gone", {"v": 1}, 1)
    store.save_session("kept", {"v": 1}, 1)
    store.delete_session("gone")
    assert not store.save_session("gone", {"v": 2}, 99)  # a save that was in flight
    store.delete_session("never-existed")  # no error
    assert not store.save_session("never-existed", {"v": 1}, 1)
    assert [s.session_id for s in store.load_all()] == ["kept"]


def test_takes_are_kept_per_session_and_go_with_it(store: Any) -> None:
    store.save_session("s", {"v": 1}, 1)
    store.save_session("t", {"v": 1}, 1)
    store.save_take("s", "a", {"id": "a"})
    store.save_take("s", "b", {"id": "b"})
    store.save_take("t", "a", {"id": "t-a"})
    assert store.load_takes("s") == [{"id": "a"}, {"id": "b"}]
    store.delete_take("s", "a")
    store.delete_take("s", "never")  # no error
    assert store.load_takes("s") == [{"id": "b"}]
    store.delete_session("s")
    assert store.load_takes("s") == []
    store.save_take("s", "late", {"id": "late"})  # in flight when it was deleted
    assert store.load_takes("s") == [] and store.load_takes("t") == [{"id": "t-a"}]


def test_concurrent_writers_keep_the_newest_revision_and_no_deleted_session(
    store: SessionStore,
) -> None:
    """Threads save interleaved revisions of many sessions while others delete some:
    the newest revision of each kept session wins, and no deleted session is stored."""
    sessions = [f"s{i}" for i in range(20)]
    deleted = set(sessions[::3])
    start = threading.Barrier(5)

    def writer(offset: int) -> None:
        start.wait()
        for revision in range(offset, 60, 4):
            for sid in sessions:
                store.save_session(sid, {"revision": revision}, revision)

    def deleter() -> None:
        start.wait()
        for sid in sorted(deleted):
            store.delete_session(sid)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    threads.append(threading.Thread(target=deleter))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    stored = {s.session_id: s for s in store.load_all()}
    assert set(stored) == set(sessions) - deleted
    assert all(s.revision == 59 and s.spec == {"revision": 59} for s in stored.values())


def test_sqlite_migrates_a_database_without_revisions(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    old = sqlite3.connect(str(path))
    old.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, spec TEXT NOT NULL, saved_at REAL)")
    old.execute("INSERT INTO sessions VALUES ('a', '{\"v\": 1}', 0.0)")
    old.commit()
    old.close()
    store = SQLiteStore(path)
    assert [(s.session_id, s.spec, s.revision) for s in store.load_all()] == [("a", {"v": 1}, 0)]
    assert store.save_session("a", {"v": 2}, 1)
    store.close()
