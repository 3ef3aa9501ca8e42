"""The solver, as sessions see it: their rate held, changes answered, parked sessions
left alone, and past saturation every session slowed alike. Bounds are loose on the
slow side (a busy machine slows everyone) and tight where the solver itself decides
(a session never stepped faster than its rate allows)."""

from __future__ import annotations

import asyncio
import time

import mujoco
from posekit.sessions import Session, SessionSpec
from posekit.sessions.solving.solver import Solver
from support.busy_session import BusySession
from support.robot_files import chain
from support.waiting import wait_for


def _run(solver: Solver, sessions: list[BusySession], seconds: float) -> dict[str, int]:
    """Attach ``sessions``, let them warm up, and count their steps over ``seconds``."""
    for session in sessions:
        solver.attach(session)
    wait_for(lambda: all(len(s.states) > 3 for s in sessions), what="first steps")
    for session in sessions:
        session.states.clear()
    time.sleep(seconds)
    return {s.id: len(s.states) for s in sessions}


def test_a_running_session_is_stepped_at_its_rate() -> None:
    session = BusySession("one", cost=0.0001, rate_hz=50.0)
    solver = Solver()
    solver.start()
    try:
        counts = _run(solver, [session], 2.0)
    finally:
        solver.stop()
    assert 0.5 * 100 <= counts["one"] <= 1.05 * 100, counts


def test_every_change_is_answered_without_raising_the_rate_past_twice() -> None:
    """40 changes in 2 s to a 30 Hz session: each is followed by a step, and a flood of
    changes steps it at most twice its rate (``WAKE_SPACING``)."""
    session = BusySession("dragged", cost=0.0001, rate_hz=30.0)
    solver = Solver()
    solver.start()
    answered = 0
    try:
        solver.attach(session)
        wait_for(lambda: len(session.states) > 3, what="first steps")
        for _ in range(40):
            before = len(session.states)
            solver.changed(session)
            wait_for(lambda before=before: len(session.states) > before, what="an answer")
            answered += 1
        session.states.clear()
        end = time.monotonic() + 1.0
        while time.monotonic() < end:  # a flood: a change every 0.1 ms
            solver.changed(session)
            time.sleep(0.0001)
        flooded = len(session.states)
    finally:
        solver.stop()
    assert answered == 40
    assert flooded <= 2 * 30 * 1.0 + 2, flooded


def test_a_parked_session_is_not_stepped_until_it_changes() -> None:
    session = BusySession("parked", cost=0.0001)
    session.parks = True
    solver = Solver()
    solver.start()
    try:
        solver.attach(session)
        wait_for(lambda: len(session.states) == 1, what="its step")
        time.sleep(0.3)
        assert len(session.states) == 1
        solver.changed(session)
        wait_for(lambda: len(session.states) == 2, what="the change's step")
    finally:
        solver.stop()


def test_a_closed_session_is_never_stepped_again() -> None:
    session = BusySession("gone", cost=0.0001)
    solver = Solver()
    solver.start()
    try:
        solver.attach(session)
        wait_for(lambda: len(session.states) > 3, what="steps")
        session.closed = True  # as Session.close does, before it removes itself
        solver.remove(session)
        time.sleep(0.05)  # a step under way ends
        count = len(session.states)
        solver.changed(session)  # a change after removal does nothing either
        time.sleep(0.3)
    finally:
        solver.stop()
    assert len(session.states) == count


def test_past_saturation_sessions_slow_alike() -> None:
    """Ten sessions each wanting 0.3 s of CPU per second (5 ms steps at 60 Hz) on one
    thread: each gets about a tenth of it, none starves."""
    sessions = [BusySession(f"s{i}", cost=0.005) for i in range(10)]
    solver = Solver()
    solver.start()
    try:
        counts = _run(solver, sessions, 2.0)
    finally:
        solver.stop()
    assert max(counts.values()) < 60 * 2.0, counts  # saturated: nobody at its own rate
    assert min(counts.values()) >= 0.75 * max(counts.values()), counts


def test_changes_take_the_place_of_regular_steps() -> None:
    """A 60 Hz session changed 20 times a second is stepped about 60 times a second, not
    more: each change steps it early, in place of its next regular step."""
    session = BusySession("dragged", cost=0.0001)
    solver = Solver()
    solver.start()
    try:
        solver.attach(session)
        wait_for(lambda: len(session.states) > 3, what="first steps")
        session.states.clear()
        for _ in range(40):
            solver.changed(session)
            time.sleep(0.05)
        steps = len(session.states)
    finally:
        solver.stop()
    assert steps <= 1.05 * 60 * 2.0 + 2, steps


def _chain_session(name: str, dofs: int, solver: Solver) -> Session:
    """A session on a chain of ``dofs`` hinges (tests/api: its step costs ~dofs³)."""
    model = mujoco.MjModel.from_xml_string(chain(dofs))
    spec = SessionSpec.model_validate(
        {
            "robot": name,
            "q": model.key_qpos[0].tolist(),
            "tasks": [
                {
                    "name": "tool",
                    "type": "frame",
                    "params": {"frame": "tool", "frame_type": "site"},
                },
                {"name": "posture", "type": "posture", "params": {"cost": 1e-3}},
            ],
            "limits": [{"type": "configuration"}],
            "solver": {"tolerance": 1e-12},  # hardly ever parks: keeps running
        }
    )
    return Session(name, spec, model, name, solver=solver)


def test_a_session_over_the_step_budget_is_paused_saying_why_and_the_others_run_on() -> None:
    """Budget 2 ms: a 256-DoF chain (about 15 ms a step) is paused with the figure and
    the setting in its state and an ``error`` to its watchers; a 16-DoF chain is still
    stepped; resumed, the heavy one runs again until it is paused again."""
    solver = Solver(max_step_s=0.002)
    heavy, light = _chain_session("heavy", 256, solver), _chain_session("light", 16, solver)
    loop = asyncio.new_event_loop()
    watcher = heavy.subscribe(loop=loop, initial_state=False)
    solver.start()
    try:
        for session in (heavy, light):
            solver.attach(session)
        paused = wait_for(
            lambda: heavy.state.status == "paused" or None, timeout=60, what="a pause"
        )
        assert paused and "POSEKIT_MAX_STEP_MS" in (heavy.state.error or "")
        assert heavy.solver.paused  # in its spec: a restart keeps it paused
        update = loop.run_until_complete(asyncio.wait_for(watcher.next(), 10))
        told = [m for m in update.messages if getattr(m, "code", None) == "too_slow"]
        assert told and "ms of CPU" in told[0].message
        seq = light.state.seq
        light.set_solver({"rate_hz": 30.0})  # a change: answered with a step
        wait_for(lambda: light.state.seq > seq, timeout=30, what="the light session stepped")
        assert light.state.status != "paused" and light.paused_why is None
        heavy.set_solver({"paused": False})
        assert heavy.paused_why is None
        wait_for(lambda: heavy.state.status == "paused" or None, timeout=60, what="a new pause")
    finally:
        solver.stop()
        loop.close()
