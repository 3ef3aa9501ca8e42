"""The session manager: solve loop parking and waking, persistence hook, capacity."""

from __future__ import annotations

import gc
import time
import weakref

import numpy as np
import pytest
from posekit.robots import RobotRegistry
from posekit.sessions import (
    MemoryStore,
    SessionLimitReached,
    SessionManager,
    SessionNotFound,
)
from pydantic import ValidationError
from support.waiting import wait_for

REGISTRY = RobotRegistry(menagerie=False)


def test_sessions_park_when_converged_and_wake_on_change() -> None:
    with SessionManager(REGISTRY) as manager:
        session = manager.create({"robot": "arm7"})
        wait_for(lambda: session.state.status == "converged")
        parked_seq = session.state.seq
        time.sleep(0.2)  # a parked session is not stepped at all
        assert session.state.seq == parked_seq
        session.set_target("ee", {"position": [0.45, 0.15, 0.3]}, ref=7)
        wait_for(lambda: session.state.ref == 7 and session.state.converged)
        assert session.state.seq > parked_seq + 1


def test_many_active_sessions_all_make_progress() -> None:
    with SessionManager(REGISTRY) as manager:
        sessions = [manager.create({"robot": "arm7"}) for _ in range(30)]
        start = {s.id: s.state.seq for s in sessions}
        for i, session in enumerate(sessions):
            session.set_target("ee", {"position": [0.4, 0.2 * np.sin(i), 0.3]})
        wait_for(lambda: all(s.state.seq > start[s.id] + 3 for s in sessions))
        wait_for(lambda: all(s.state.status == "converged" for s in sessions))


def test_deleted_sessions_stop_and_are_forgotten() -> None:
    with SessionManager(REGISTRY) as manager:
        session = manager.create()
        manager.delete(session.id)
        assert session.closed
        with pytest.raises(SessionNotFound):
            manager.get(session.id)
        with pytest.raises(SessionNotFound):
            manager.delete(session.id)


def test_capacity_is_enforced() -> None:
    with SessionManager(REGISTRY, max_sessions=2) as manager:
        manager.create()
        manager.create()
        with pytest.raises(SessionLimitReached):
            manager.create()
        assert manager.count() == 2


def test_spec_and_robot_together_are_refused() -> None:
    with SessionManager(REGISTRY) as manager:
        spec = manager.create().spec().model_dump()
        with pytest.raises(ValidationError, match="robot"):
            manager.create({"spec": spec, "robot": "arm7"})


def test_store_hook_saves_deletes_and_restores() -> None:
    store = MemoryStore()
    with SessionManager(REGISTRY, store, flush_interval=0.05) as manager:
        kept = manager.create({"robot": "arm7", "solver": {"paused": True}})
        gone = manager.create({"robot": "humanoid"})
        assert set(store.specs) == {kept.id, gone.id}
        kept.patch_task("posture", {"cost": 0.5})
        wait_for(lambda: store.specs[kept.id]["tasks"][1]["params"]["cost"] == 0.5)
        manager.delete(gone.id)
        assert set(store.specs) == {kept.id}
        expected = kept.spec().model_dump(mode="json")
    with SessionManager(REGISTRY, store) as restarted:
        restored = restarted.get(kept.id)
        assert restored.spec().model_dump(mode="json") == expected
        assert [s.id for s in restarted.sessions()] == [kept.id]


def test_a_broken_stored_spec_does_not_stop_the_others() -> None:
    store = MemoryStore(
        {"bad": {"robot": "nope", "q": []}, "good": {"robot": "arm7", "q": [0.0] * 7}}
    )
    with SessionManager(REGISTRY, store) as manager:
        assert [s.id for s in manager.sessions()] == ["good"]


def test_a_deleted_session_is_freed_without_the_cycle_collector() -> None:
    """No reference cycle keeps a session (and its robot model) alive after it is deleted:
    its memory goes back at once, not at some later garbage collection."""
    with SessionManager(REGISTRY) as manager:
        session = manager.create({"robot": "arm7", "solver": {"paused": True}})
        wait_for(lambda: manager.sessions()[0].state.status == "paused")
        gone = weakref.ref(session)
        manager.delete(session.id)
        gc.disable()
        try:
            del session
            wait_for(lambda: gone() is None, timeout=5.0, what="the session freed")
        finally:
            gc.enable()
