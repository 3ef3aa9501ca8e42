"""A state's JSON bytes are the ``state`` message dict's, encoded once: on real states of a
running, converged, throttled and paused session, and a failed one."""

from __future__ import annotations

import math

from posekit.robots import RobotRegistry
from posekit.sessions import SessionState
from posekit.sessions.live.state import JSON_ENCODER
from posekit.sessions.live.subscription import SignalBatch
from posekit.sessions.manager import SessionManager

REGISTRY = RobotRegistry(menagerie=False)


def real_states() -> list[SessionState]:
    session = SessionManager(REGISTRY).create({"robot": "arm7"})
    position = list(session.task("ee").target.position)  # type: ignore[union-attr]
    position[1] += 0.2
    session.set_target("ee", {"position": position}, ref={"drag": "é", "n": 3})
    session.patch_task("posture", {"enabled": False})
    states, batch = [], SignalBatch()
    for i in range(40):
        states.append(session.step(batch, i % 3 == 0, 60.0 / (1 + i % 7)))
    session.set_solver({"tolerance": 1.0})
    states.append(session.step())  # converged
    session.set_solver({"paused": True})
    states.append(session.step())  # paused
    states.append(SessionState(states[-1].seq + 1, 3.0, [0.1], {"ee": 0.5}, False, "failed",
                               "the model is gone — «é»", 0.0))  # fmt: skip
    return states


def test_the_json_text_is_the_message_encoded() -> None:
    states = real_states()
    assert {s.status for s in states} == {"running", "converged", "paused", "failed"}
    assert any(s.throttled for s in states) and any(s.ref is not None for s in states)
    assert any(v is None for s in states for v in s.errors.values())
    for state in states:
        expected = JSON_ENCODER.encode(state.message())
        assert state.json() == expected.decode()
        assert state.json() is state.json()  # encoded once for every watcher


def test_non_finite_errors_are_null_in_json() -> None:
    state = SessionState(1, 2.0, [0.5], {"a": math.nan, "b": None}, False, "running",
                         None, 1.0, None, 0, False, 60.0)  # fmt: skip
    assert '"errors":{"a":null,"b":null}' in state.json()
    assert state.json() == JSON_ENCODER.encode(state.message()).decode()
