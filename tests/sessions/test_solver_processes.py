"""Sessions solved in solver processes: mirrors replay every change, states come back.

A mirror is checked two ways: its solver process exports its portable spec, which must
equal the session's (q, tasks with targets and weights, limits, solver settings); and
while the solver is paused, the mirror's state (task errors at its q, without moving)
must equal that of a reference session built here from the session's spec.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import pickle
import signal
import threading
from collections.abc import Iterator

import numpy as np
import pytest
from posekit.ik.configuration import Configuration
from posekit.robots import RobotRegistry
from posekit.sessions import Session, SessionManager, SessionSpec, SessionState, state_frame
from posekit.sessions import state as state_module
from posekit.sessions.changes import RemoveTask, SetTarget
from posekit.sessions.kinds import Target
from posekit.sessions.loops.messages import Batch, Replay, Solved, States
from posekit.sessions.loops.solver_processes import SolverProcesses
from support.models import random_configuration
from support.waiting import wait_for

REGISTRY = RobotRegistry(menagerie=False)
ARM = REGISTRY.model("arm7")


@pytest.fixture(scope="module")
def processes() -> Iterator[SolverProcesses]:
    loop = SolverProcesses(1, REGISTRY)
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


def assert_mirrors(session: Session, processes: SolverProcesses) -> None:
    state = mirrored_state(session, "paused")
    assert processes.mirror_spec(session) == session.spec().model_dump(mode="json")
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


def test_every_kind_of_change_is_replayed_on_the_mirror(
    manager: SessionManager, processes: SolverProcesses
) -> None:
    session = manager.create({"robot": "arm7", "solver": {"paused": True}})
    failures = processes._link_of[session.id].failures
    assert_mirrors(session, processes)
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
        lambda: session.patch_task("posture", {"cost": 0.3}),
        lambda: session.replace_spec({**session.spec().model_dump(), "q": ARM.qpos0.tolist()}),
        lambda: session.set_q(keyframe="home"),
    ]
    for change in changes:
        change()
        assert_mirrors(session, processes)
    assert session.state.ref == 1
    assert processes._link_of[session.id].failures == failures  # nothing was repaired


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
    reference = Configuration(session.model, np.array(session.spec().q))
    position = reference.get_transform_frame_to_world("ee", "site").translation()
    assert np.linalg.norm(position - np.array(target.position)) < 1e-3


def test_a_state_solved_before_set_q_does_not_undo_it(
    manager: SessionManager, processes: SolverProcesses
) -> None:
    session = manager.create({"robot": "arm7", "solver": {"paused": True}})
    before = mirrored_state(session)
    # A state the mirror solved before it replayed set_q (a half seq: the mirror's own
    # answer to set_q, seq + 1, must still be newer).
    stale = SessionState(before.seq + 0.5, 0.0, before.q, {}, False, "paused", None, 0.0)  # type: ignore[arg-type]
    stale.revision = session.revision
    session.set_q(ARM.qpos0 + 0.1)
    session.adopt(stale, _NoBatch())  # it arrives right after set_q
    assert session.state is not stale  # dropped, not published (the mirror's answer to
    assert session.state.seq != stale.seq  # set_q, with the new q, may be there already)
    assert session.q == pytest.approx(ARM.qpos0 + 0.1, abs=1e-15)  # still the q that was set
    assert_mirrors(session, processes)


class _NoBatch:
    def add(self, subscription: object) -> None:
        raise AssertionError("nobody subscribed")


def test_a_killed_solver_process_is_restarted_with_its_sessions(
    manager: SessionManager, processes: SolverProcesses
) -> None:
    session = manager.create({"robot": "arm7"})
    before = mirrored_state(session).seq
    spare = wait_for(processes.spare_pid, what="a spare solver process")
    restarts, pid = processes.restarts, processes.pids()[0]
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: processes.restarts == restarts + 1, what="a restart")
    assert processes.pids()[0] == spare  # the warm spare took over, no new start-up
    wait_for(lambda: processes.spare_pid() not in (None, spare), what="a new spare")
    session.set_target("ee", {"position": [0.3, 0.25, 0.4]}, ref="after")
    state = wait_for(
        lambda: session.state if session.state.ref == "after" else None, what="an answer"
    )
    assert state.seq > before


def test_a_replay_that_fails_reopens_the_mirror(
    manager: SessionManager, processes: SolverProcesses
) -> None:
    session = manager.create({"robot": "arm7", "solver": {"paused": True}})
    assert_mirrors(session, processes)
    link = processes._link_of[session.id]
    failing = (RemoveTask("no_such_task"), SetTarget("no_such_task", Target(position=[0, 0, 0])))
    for change in failing:
        failures, seq = link.failures, session.state.seq
        link.send(Replay(session.id, session.revision, change))
        wait_for(lambda seq=seq: session.state.seq > seq, what="a re-opened mirror")
        assert link.failures == failures + 1
        assert_mirrors(session, processes)
    session.patch_task("posture", {"cost": 0.5})
    assert_mirrors(session, processes)


def test_a_mirror_that_keeps_failing_leaves_the_session_failed(
    processes: SolverProcesses,
) -> None:
    """A session the solver process cannot open (its registry lacks the robot) is
    re-opened ``MAX_REOPENS`` times, then reported failed and no longer mirrored."""
    spec = SessionSpec.model_validate({"robot": "not_in_the_registry", "q": ARM.qpos0.tolist()})
    session = Session("unsolvable", spec, ARM, "arm7", scheduler=processes)
    processes.attach(session)
    state = wait_for(
        lambda: session.state if session.state.status == "failed" else None, what="failed"
    )
    assert "not_in_the_registry" in state.error
    assert session.id not in processes._link_of
    assert state.q == pytest.approx(session.q.tolist(), abs=0.0)
    session.set_q(ARM.qpos0 + 0.1)  # accepted, but nobody solves it now
    assert session.state is state
    session.close()


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
            # Two new solver processes start first (imports, cached kernels): on a loaded
            # machine that alone can take seconds.
            wait_for(
                lambda s=session, i=i: s.state.ref == i and s.state.status == "converged",
                timeout=30.0,
                what=f"session {i} converged",
            )
            assert session.state.errors["ee"] < 1e-3


def test_subscribers_get_the_mirrored_states(manager: SessionManager) -> None:
    session = manager.create({"robot": "arm7"})
    mirrored_state(session)

    async def scenario() -> list[SessionState]:
        subscription = session.subscribe(initial_state=False)
        session.set_target("ee", {"position": [0.4, -0.1, 0.35]}, ref="watch")
        received = []
        while not received or received[-1].status != "converged":
            update = await asyncio.wait_for(subscription.next(), 10)
            if update.state is not None:
                received.append(update.state)
        subscription.close()
        return received

    received = asyncio.run(scenario())
    assert received[-1].ref == "watch"
    assert [s.seq for s in received] == sorted({s.seq for s in received})
    assert all(math.isfinite(x) for s in received for x in s.q)
    assert received[-1].json() == session.state.json()


@pytest.mark.parametrize("encoding", ["json", "binary"])
def test_states_come_encoded_for_the_watchers(
    manager: SessionManager, monkeypatch: pytest.MonkeyPatch, encoding: str
) -> None:
    """The solver process encodes a state once, in the encodings its watchers use: the
    server process only forwards bytes."""
    session = manager.create({"robot": "arm7"})
    mirrored_state(session)
    encoded_here: list[str] = []
    real_json, real_frame = state_module.JSON_ENCODER, state_frame.encode

    class RecordingEncoder:
        def encode(self, message: object) -> bytes:
            encoded_here.append("json")
            return real_json.encode(message)

    monkeypatch.setattr(state_module, "JSON_ENCODER", RecordingEncoder())
    monkeypatch.setattr(state_frame, "encode", lambda **k: (encoded_here.append("binary"), real_frame(**k))[1])  # fmt: skip

    async def scenario() -> list[SessionState]:
        subscription = session.subscribe(initial_state=False, encoding=encoding)  # type: ignore[arg-type]
        await asyncio.sleep(0.3)  # the solver process learns the encoding
        session.set_target("ee", {"position": [0.4, 0.1, 0.35]}, ref=encoding)
        received: list[SessionState] = []
        while not received or received[-1].status != "converged":
            update = await asyncio.wait_for(subscription.next(), 10)
            if update.state is not None and update.state.ref == encoding:
                received.append(update.state)
        subscription.close()
        return received

    received = asyncio.run(scenario())
    payloads = [state.json() if encoding == "json" else state.binary() for state in received]
    assert payloads and encoded_here == []  # every one arrived encoded
    other = received[-1].binary() if encoding == "json" else received[-1].json()
    assert other and encoded_here == ["binary" if encoding == "json" else "json"]


def test_states_of_a_replaced_mirror_are_dropped(
    manager: SessionManager, processes: SolverProcesses
) -> None:
    """A session unloaded and revived (or re-opened) gets a new mirror; states still in
    the pipe from the old one must not be published."""
    session = manager.create({"robot": "arm7", "solver": {"paused": True}})
    before = mirrored_state(session)
    link = processes._link_of[session.id]
    old_epoch = link._epochs[session.id] - 1
    late = SessionState(before.seq + 100, 0.0, before.q, {}, False, "paused", None, 0.0)
    late.revision = session.revision
    link._handle(States([Solved(session.id, old_epoch, late)]))
    assert session.state is before
    link._handle(States([Solved(session.id, link._epochs[session.id], late)]))
    assert session.state is late


def test_a_session_closed_before_it_is_attached_gets_no_mirror(
    processes: SolverProcesses,
) -> None:
    spec = SessionSpec.model_validate({"robot": "arm7", "q": ARM.qpos0.tolist()})
    session = Session("closed-early", spec, ARM, "arm7", scheduler=processes)
    session.close()
    processes.attach(session)
    assert session.id not in processes._link_of
    assert all(session.id not in link.sessions for link in processes._links)


def test_replays_sent_from_an_event_loop_go_together_in_order(
    manager: SessionManager, processes: SolverProcesses, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Targets set on an event loop (a stream's) reach the solver process as one batch per
    loop turn, in order: the mirror ends on the last one and echoes its ref."""
    session = manager.create({"robot": "arm7", "solver": {"paused": True}})
    mirrored_state(session)
    link = processes._link_of[session.id]
    sent: list[object] = []
    channel = link._channel
    assert channel is not None
    real_send = channel.send
    monkeypatch.setattr(channel, "send", lambda b: (sent.append(pickle.loads(b)), real_send(b))[1])  # fmt: skip
    positions = [[0.4, 0.01 * k, 0.35] for k in range(12)]

    async def drag() -> None:
        for k, position in enumerate(positions):
            session.set_target("ee", {"position": position}, ref=k)
        await asyncio.sleep(0)  # the end of this turn: the batch goes

    asyncio.run(drag())
    batches = [m for m in sent if isinstance(m, Batch)]
    assert not [m for m in sent if type(m) is tuple]  # none went alone
    assert len(batches) == 1
    moves = batches[0].messages  # TargetMove: (session_id, revision, task, model, values, ref)
    assert all(type(m) is tuple for m in moves)
    assert [m[5] for m in moves] == list(range(12))
    assert [m[1] for m in moves] == sorted(m[1] for m in moves)
    session.set_solver({"paused": True})  # sent at once (not from a loop): a state follows
    assert_mirrors(session, processes)
    assert session.state.ref == 11
    assert session.task("ee").target.position == positions[-1]


def test_started_on_an_event_loop_the_pipe_is_read_on_that_loop() -> None:
    """Started from a running loop (the app's lifespan), states are adopted on that loop's
    thread and wake its watchers there: no reader thread in between."""
    adopted_on: set[int] = set()

    async def scenario() -> int:
        processes = SolverProcesses(1, REGISTRY)
        processes.on_steps = lambda solve_us: adopted_on.add(threading.get_ident())
        with SessionManager(REGISTRY, solve_loop=processes) as manager:
            session = manager.create({"robot": "arm7"})
            subscription = session.subscribe(initial_state=False)
            session.set_target("ee", {"position": [0.4, -0.1, 0.35]}, ref="on the loop")
            while (await asyncio.wait_for(subscription.next(), 30)).state is None:
                pass
            subscription.close()
        return threading.get_ident()

    assert adopted_on == {asyncio.run(scenario())}


def test_an_unreadable_message_is_logged_and_skipped(
    manager: SessionManager, processes: SolverProcesses, caplog: pytest.LogCaptureFixture
) -> None:
    session = manager.create({"robot": "arm7"})
    link = processes._link_of[session.id]
    late = mirrored_state(session)
    newer = SessionState(late.seq + 1000, 0.0, late.q, {}, False, "paused", None, 0.0)
    newer.revision = session.revision
    states = States([Solved(session.id, link._epochs[session.id], newer)])
    with caplog.at_level(logging.ERROR):
        link._frame(memoryview(b"\x80\x05not a pickle"))
        link._frame(memoryview(pickle.dumps(states, pickle.HIGHEST_PROTOCOL)))
    assert "could not read a message" in caplog.text
    assert session.state.seq == newer.seq
