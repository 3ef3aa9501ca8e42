"""Sessions solved in solver processes: mirrors replay every change, states come back.

A mirror is checked against a reference: a session built in this process from the API
session's portable spec and stepped once. While the solver is paused, each step of the
mirror reports the task errors at its q without moving, so equal errors and equal q
mean the mirror holds the same q, tasks, targets and weights.
"""

from __future__ import annotations

import asyncio
import math
import os
import signal
from collections.abc import Iterator

import numpy as np
import pytest
from posekit.robots import RobotRegistry
from posekit.sessions import Session, SessionManager, SessionState
from posekit.sessions.solver_processes import SolverProcesses
from tests_support import random_configuration, wait_for

REGISTRY = RobotRegistry(menagerie=False)
ARM = REGISTRY.model("arm7")


@pytest.fixture(scope="module")
def processes() -> Iterator[SolverProcesses]:
    loop = SolverProcesses(1)
    loop.start()
    yield loop
    loop.stop()


@pytest.fixture
def manager(processes: SolverProcesses) -> Iterator[SessionManager]:
    manager = SessionManager(REGISTRY, solve_loop=processes)
    manager.start()
    yield manager
    for session in manager.sessions():
        manager.delete(session.id)


def mirrored_state(session: Session, status: str | None = None) -> SessionState:
    """The first state the mirror computed after the session's latest change."""

    def current() -> SessionState | None:
        state = session.state
        fresh = state.revision == session.revision and state.seq > 1
        return state if fresh and status in (None, state.status) else None

    return wait_for(current, what=f"a state at revision {session.revision}")


def assert_mirrors(session: Session) -> None:
    state = mirrored_state(session, "paused")
    reference = Session("reference", session.spec(), session.model, session.entry)
    expected = reference.step()
    assert state.q == pytest.approx(session.q.tolist(), abs=1e-12)
    assert state.q == pytest.approx(expected.q, abs=1e-12)
    assert list(state.errors) == list(expected.errors)
    for name, value in expected.errors.items():
        if value is None:
            assert state.errors[name] is None, name
        else:
            assert state.errors[name] == pytest.approx(value, rel=1e-9, abs=1e-12), name


def test_every_kind_of_change_is_replayed_on_the_mirror(manager: SessionManager) -> None:
    session = manager.create({"robot": "arm7", "solver": {"paused": True}})
    assert_mirrors(session)
    rng = np.random.default_rng(3)
    changes = [
        lambda: session.add_task({"type": "look_at", "params": {"frame": "wrist_cam"}}),
        lambda: session.patch_task(
            "ee", {"position_cost": 3.0, "target": {"position": [0.4, 0.1, 0.5]}}
        ),
        lambda: session.set_target("look_at_wrist_cam", {"position": [1.0, 0.5, 0.2]}, ref=1),
        lambda: session.add_task({"type": "com", "params": {"cost": [1, 1, 0]}}),
        lambda: session.patch_task("com", {"enabled": False}),
        lambda: session.remove_task("posture"),
        lambda: session.add_limit({"type": "velocity", "params": {"velocities": {"joint1": 0.5}}}),
        lambda: session.patch_limit("velocity", {"velocities": {"joint1": 0.7}}),
        lambda: session.patch_limit("configuration", {"gain": 0.5, "enabled": False}),
        lambda: session.remove_limit("velocity"),
        lambda: session.set_q(random_configuration(ARM, rng)),
        lambda: session.set_solver({"damping": 1e-3, "rate_hz": 30}),
        lambda: session.add_task({"type": "posture", "params": {"cost": 0.01}}),
        lambda: session.replace_spec({**session.spec().model_dump(), "q": ARM.qpos0.tolist()}),
        lambda: session.set_q(keyframe="home"),
    ]
    for change in changes:
        change()
        assert_mirrors(session)
    assert session.state.ref == 1


def test_solved_q_becomes_the_session_q(manager: SessionManager) -> None:
    session = manager.create({"robot": "arm7"})
    start = mirrored_state(session).seq
    target = session.set_target("ee", {"position": [0.35, -0.2, 0.45]}, ref="go")
    state = wait_for(
        lambda: (
            session.state
            if (session.state.ref, session.state.status) == ("go", "converged")
            else None
        ),
        what="convergence",
    )
    assert state.seq > start + 1
    assert session.q.tolist() == pytest.approx(state.q, abs=0.0)
    assert session.spec().q == pytest.approx(state.q, abs=0.0)
    assert state.errors["ee"] < 1e-3
    reference = Session("reference", session.spec(), session.model, session.entry)
    position = reference._configuration.data.site("ee").xpos
    assert np.linalg.norm(position - np.array(target.position)) < 1e-3


def test_a_state_solved_before_set_q_does_not_undo_it(manager: SessionManager) -> None:
    session = manager.create({"robot": "arm7", "solver": {"paused": True}})
    before = mirrored_state(session)
    # A state the mirror solved before it replayed set_q (a half seq: the mirror's own
    # answer to set_q, seq + 1, must still be newer).
    stale = SessionState(before.seq + 0.5, 0.0, before.q, {}, False, "paused", None, 0.0)  # type: ignore[arg-type]
    stale.revision = session.revision
    with session._lock:  # it arrives right after set_q
        session.set_q(ARM.qpos0 + 0.1)
        session._adopt(stale, _NoBatch())
    assert session.state is stale
    assert session.q == pytest.approx(ARM.qpos0 + 0.1, abs=1e-15)  # still the q that was set
    assert_mirrors(session)


class _NoBatch:
    def add(self, subscription: object) -> None:
        raise AssertionError("nobody subscribed")


def test_a_killed_solver_process_is_restarted_with_its_sessions(
    manager: SessionManager, processes: SolverProcesses
) -> None:
    session = manager.create({"robot": "arm7"})
    before = mirrored_state(session).seq
    restarts, pid = processes.restarts, processes.pids()[0]
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: processes.restarts == restarts + 1, what="a restart")
    assert processes.pids()[0] not in (None, pid)
    session.set_target("ee", {"position": [0.3, 0.25, 0.4]}, ref="after")
    state = wait_for(
        lambda: session.state if session.state.ref == "after" else None, what="an answer"
    )
    assert state.seq > before


def test_a_replay_that_fails_reopens_the_mirror(
    manager: SessionManager, processes: SolverProcesses
) -> None:
    session = manager.create({"robot": "arm7", "solver": {"paused": True}})
    assert_mirrors(session)
    link = processes._link_of[session.id]
    with session._lock:  # as a change would: no other change in between
        link.send(("call", session.id, session.revision, "remove_task", ("no_such_task",)))
        link.send(("call", session.id, session.revision, "close", ()))
    session.patch_task("posture", {"cost": 0.5})
    assert_mirrors(session)


def test_sessions_are_spread_over_the_processes() -> None:
    with SessionManager(REGISTRY, solve_loop=SolverProcesses(2)) as manager:
        sessions = [manager.create({"robot": "arm7"}) for _ in range(4)]
        loop = manager.solve_loop
        assert isinstance(loop, SolverProcesses)
        pids = loop.pids()
        assert len(set(pids)) == 2 and None not in pids
        owners = [loop._link_of[s.id].pid for s in sessions]
        assert sorted(owners.count(pid) for pid in pids) == [2, 2]
        for i, session in enumerate(sessions):
            session.set_target("ee", {"position": [0.3, 0.1 * i - 0.15, 0.45]}, ref=i)
        for i, session in enumerate(sessions):
            wait_for(lambda s=session, i=i: s.state.ref == i and s.state.status == "converged")
            assert session.state.errors["ee"] < 1e-3


def test_subscribers_get_the_mirrored_states(manager: SessionManager) -> None:
    session = manager.create({"robot": "arm7"})
    mirrored_state(session)

    async def scenario() -> list[SessionState]:
        subscription = session.subscribe(initial_state=False)
        session.set_target("ee", {"position": [0.4, -0.1, 0.35]}, ref="watch")
        received = []
        async with asyncio.timeout(10):
            async for update in subscription:
                if update.state is not None:
                    received.append(update.state)
                    if update.state.status == "converged":
                        break
        subscription.close()
        return received

    received = asyncio.run(scenario())
    assert received[-1].ref == "watch"
    assert [s.seq for s in received] == sorted({s.seq for s in received})
    assert all(math.isfinite(x) for s in received for x in s.q)
    assert received[-1].json() == session.state.json()
