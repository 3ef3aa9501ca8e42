"""Leases: two replicas (two managers, two replica ids) on one PostgreSQL schema.

Exactly one replica solves a session; the other answers NotOwner and changes nothing; a
lease that expires is taken over with epoch + 1 and the session restored from its last
acknowledged spec; a replica that was paused past its lease (here: its lease keeper
stopped, so nothing renews it) can no longer write, and drops the session.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest
from posekit.sessions.cluster.leases import TakenSession
from posekit.sessions.cluster.postgres_leases import PostgresLeases
from posekit.sessions.errors import NotOwner, SessionNotFound
from posekit.sessions.manager import SessionManager
from posekit.sessions.store.postgres_database import PostgresDatabase
from posekit.sessions.store.postgres_store import PostgresStore
from support.waiting import wait_for

TTL_S = 1.0
Replica = Callable[..., SessionManager]


@pytest.fixture
def replica(postgres_url: str) -> Iterator[Replica]:
    """Starts managers named by their replica id on the test's schema."""
    started: list[SessionManager] = []

    def start(name: str, max_sessions: int = 100) -> SessionManager:
        database = PostgresDatabase(postgres_url)
        leases = PostgresLeases(database, name, TTL_S)
        manager = SessionManager(
            store=PostgresStore(database, leases),
            leases=leases,
            flush_interval=0.1,
            max_sessions=max_sessions,
        )
        manager.start()
        started.append(manager)
        return manager

    yield start
    for manager in started:
        manager.shutdown()


def damping(name: str) -> dict[str, object]:
    return {"name": name, "type": "damping", "params": {"cost": 1e-3}}


def pause(manager: SessionManager) -> None:
    """As if the replica's process were stopped: nothing renews its leases any more."""
    manager.keeper.stop()


def stored_tasks(manager: SessionManager, session_id: str) -> set[str]:
    spec = next(s.spec for s in manager.store.load_all() if s.session_id == session_id)
    return {task["name"] for task in spec["tasks"]}


def test_one_owner_and_the_other_replica_answers_not_owner(replica: Replica) -> None:
    a, b = replica("a"), replica("b")
    session = a.create({"robot": "arm7"})
    with pytest.raises(NotOwner) as refused:
        b.get(session.id)
    assert refused.value.owner == "a"
    assert b.count() == 0 and a.count() == 1
    with pytest.raises(NotOwner):
        b.delete(session.id)
    assert a.get(session.id) is session
    listed = {info.id: info for info in b.listing()}
    assert listed[session.id].owner == "a" and listed[session.id].live
    assert listed[session.id].status == "remote"
    assert a.leases.held() == {session.id} and b.leases.held() == set()


def test_a_takeover_after_expiry_has_the_next_epoch_and_the_acknowledged_changes(
    replica: Replica,
) -> None:
    a, b = replica("a"), replica("b")
    session_id = a.create({"robot": "arm7"}).id
    with a.edit(session_id) as session:
        session.add_task(damping("acknowledged"))
    epoch = a.leases.epoch_of(session_id)  # type: ignore[attr-defined]
    pause(a)
    taken = wait_for(lambda: _try_get(b, session_id), timeout=10 * TTL_S, what="takeover")
    assert "acknowledged" in {t.name for t in taken.tasks()}
    assert b.leases.epoch_of(session_id) == epoch + 1  # type: ignore[attr-defined]
    assert b.leases.takeovers >= 1


def test_a_request_during_a_sweep_waits_for_its_takeover_instead_of_taking_it_again(
    replica: Replica,
) -> None:
    a, b = replica("a"), replica("b")
    session_id = a.create({"robot": "arm7"}).id
    epoch = a.leases.epoch_of(session_id)  # type: ignore[attr-defined]
    pause(a)
    pause(b)  # b sweeps below, by hand, and only there
    time.sleep(1.5 * TTL_S)  # a's lease has expired
    found: dict[str, object] = {}

    def sweep_then_request(room: int) -> list[TakenSession]:
        taken = b.leases.sweep(room)  # the lease is b's now; the session is not live yet
        request = threading.Thread(target=lambda: found.update(got=b.get(session_id)))
        request.start()
        request.join(0.5)
        found["waited"] = request.is_alive()  # it waits for this sweep's restore
        found["request"] = request
        return taken

    adopted = b.ownership.adopt_swept(sweep_then_request)  # type: ignore[attr-defined]
    request = found["request"]
    assert isinstance(request, threading.Thread)
    request.join(10.0)
    assert adopted == [(session_id, None)]
    assert found["waited"] is True
    assert found["got"] is b.get(session_id)  # the copy the sweep restored, still live
    assert b.leases.epoch_of(session_id) == epoch + 1  # type: ignore[attr-defined]


def test_a_paused_owner_cannot_write_after_the_takeover_and_drops_the_session(
    replica: Replica,
) -> None:
    a, b = replica("a"), replica("b")
    session_id = a.create({"robot": "arm7"}).id
    pause(a)
    wait_for(lambda: _try_get(b, session_id), timeout=10 * TTL_S, what="takeover")
    with b.edit(session_id) as session:
        session.add_task(damping("by_b"))
    # a resumes: its copy is stale; an acknowledged change is refused, nothing stored
    with pytest.raises(NotOwner) as refused, a.edit(session_id) as stale:
        stale.add_task(damping("by_a"))
    assert refused.value.owner == "b"
    assert a.count() == 0, "the paused owner still solves the session"
    assert stored_tasks(b, session_id) >= {"by_b"}
    assert "by_a" not in stored_tasks(b, session_id)


def test_a_renewal_that_finds_the_lease_lost_drops_the_session(replica: Replica) -> None:
    a, b = replica("a"), replica("b")
    session_id = a.create({"robot": "arm7"}).id
    pause(a)
    wait_for(lambda: _try_get(b, session_id), timeout=10 * TTL_S, what="takeover")
    assert a.count() == 1  # paused: it has not noticed yet
    a.keeper.renew()
    assert a.count() == 0 and a.leases.held() == set()
    assert a.leases.renew_failures >= 1


def test_the_sweep_takes_over_a_dead_replicas_sessions_without_a_request(
    replica: Replica,
) -> None:
    a, b = replica("a"), replica("b")
    ids = {a.create({"robot": "arm7"}).id for _ in range(3)}
    pause(a)
    solved = lambda: {s.id for s in b.sessions()} == ids  # noqa: E731
    wait_for(solved, timeout=10 * TTL_S, what="sweep")
    assert b.leases.held() == ids


def test_a_clean_shutdown_hands_the_sessions_over_at_once(replica: Replica) -> None:
    a, b = replica("a"), replica("b")
    session_id = a.create({"robot": "arm7"}).id
    a.shutdown()
    wait_for(lambda: b.count() == 1, timeout=10 * TTL_S, what="handover")
    assert b.leases.held() == {session_id}


def test_no_acknowledged_change_is_lost_across_a_takeover(replica: Replica) -> None:
    """Changes are acknowledged on the owner while its lease expires and the other
    replica takes the session: every acknowledged one is in the new owner's session."""
    a, b = replica("a"), replica("b")
    session_id = a.create({"robot": "arm7"}).id
    acknowledged: list[str] = []
    stop = threading.Event()

    def writer() -> None:
        index = 0
        while not stop.is_set():
            name = f"damp{index}"
            index += 1
            try:
                with a.edit(session_id) as session:
                    session.add_task(damping(name))
            except (NotOwner, SessionNotFound):
                return
            acknowledged.append(name)

    thread = threading.Thread(target=writer)
    thread.start()
    wait_for(lambda: len(acknowledged) >= 3, what="first acknowledged changes")
    pause(a)
    taken = wait_for(lambda: _try_get(b, session_id), timeout=10 * TTL_S, what="takeover")
    thread.join(10)
    stop.set()
    assert set(acknowledged) <= {t.name for t in taken.tasks()}


def test_a_delete_is_final_for_every_replica(replica: Replica) -> None:
    a, b = replica("a"), replica("b")
    session_id = a.create({"robot": "arm7"}).id
    a.delete(session_id)
    for manager in (a, b):
        with pytest.raises(SessionNotFound):
            manager.get(session_id)
    assert session_id not in {info.id for info in b.listing()}


def test_a_free_session_is_taken_by_whichever_replica_is_asked(replica: Replica) -> None:
    """An idle session unloaded by its owner frees its lease: another replica revives it."""
    a, b = replica("a"), replica("b")
    session_id = a.create({"robot": "arm7"}).id
    with a.edit(session_id) as session:
        session.add_task(damping("kept"))
    a.idle_unload_s = 1e-6
    assert a.unload_idle() == [session_id]
    listed = {info.id: info for info in b.listing()}
    assert not listed[session_id].live and listed[session_id].owner is None
    revived = b.get(session_id)
    assert "kept" in {t.name for t in revived.tasks()}
    with pytest.raises(NotOwner):
        a.get(session_id)


def test_a_full_replica_answers_not_owner_so_that_another_one_takes_the_session(
    replica: Replica,
) -> None:
    a, b = replica("a"), replica("b", max_sessions=1)
    b.create({"robot": "arm7"})
    session_id = a.create({"robot": "arm7"}).id
    a.shutdown()  # its lease expires at once; b has no room for it
    with pytest.raises(NotOwner):
        b.get(session_id)
    assert b.count() == 1 and session_id not in b.leases.held()
    c = replica("c")
    wait_for(lambda: c.count() == 1, timeout=10 * TTL_S, what="takeover by c")
    assert c.leases.held() == {session_id}


def test_the_sweep_removes_a_lease_whose_session_was_never_stored(replica: Replica) -> None:
    """A creation that failed after taking its lease leaves the lease alone: once it
    expires, a sweep deletes it rather than holding it forever."""
    a, b = replica("a"), replica("b")
    pause(a)
    a.leases.create("never-stored")
    database = b.store.database  # type: ignore[attr-defined]

    def leases_left() -> int:
        with database.connection() as connection:
            return connection.execute("SELECT count(*) FROM leases").fetchone()[0]

    wait_for(lambda: leases_left() == 0, timeout=10 * TTL_S, what="orphan lease removed")
    assert b.leases.held() == set() and b.leases.takeovers == 0


def _try_get(manager: SessionManager, session_id: str) -> object:
    try:
        return manager.get(session_id)
    except NotOwner:
        return None
