"""Takes: a session records what it is given; a replay of it gives the same states."""

from __future__ import annotations

import numpy as np
from posekit.robots import RobotRegistry
from posekit.sessions import Session, SessionSpec
from posekit.sessions.takes.replay import replay
from posekit.sessions.takes.take import Take

REGISTRY = RobotRegistry(menagerie=False)
ARM = REGISTRY.model("arm7")


def arm_session() -> Session:
    spec = SessionSpec.model_validate(
        {
            "robot": "arm7",
            "q": ARM.key_qpos[0].tolist(),
            "tasks": [
                {"name": "ee", "type": "frame", "params": {"frame": "ee"}},
                {"name": "posture", "type": "posture", "params": {"cost": 1e-3}},
            ],
            "limits": [{"type": "configuration"}],
        }
    )
    return Session("t", spec, ARM, "arm7")


def drive(session: Session, steps: int = 120) -> list[list[float]]:
    """A drag of the end effector with a weight change and a q reset on the way, the
    session stepped by hand; the q of every step."""
    qs = []
    for k in range(steps):
        if k % 3 == 0:
            angle = 2 * np.pi * k / steps
            position = [0.45 + 0.1 * np.cos(angle), 0.1 * np.sin(angle), 0.45]
            session.move_target("ee", {"position": position}, ref=k)
        if k == 40:
            session.patch_task("ee", {"orientation_cost": 0.01})
        if k == 80:
            session.set_q(ARM.key_qpos[0].tolist())
        qs.append(session.step().q)
    return qs


def test_a_replay_gives_the_live_states_bit_for_bit() -> None:
    session = arm_session()
    session.step()  # before the take: not in it
    session.start_take("drag")
    live = drive(session)
    take = session.stop_take()
    assert take.steps == 120 and len(take.events) == 42
    again = Take.model_validate_json(take.model_dump_json())  # a downloaded file
    for recorded in (take, again):
        result = replay(recorded, ARM, "arm7")
        assert result.q.tolist() == live
        assert result.status == ["running"] * 120 or "converged" in result.status
    assert replay(take, ARM, "arm7").q.tolist() == replay(again, ARM, "arm7").q.tolist()


def test_a_take_replayed_through_other_weights_tracks_differently() -> None:
    session = arm_session()
    session.start_take("drag")
    drive(session)
    take = session.stop_take()
    heavy = take.start.model_copy(deep=True)
    heavy.tasks[1].params.cost = 10.0  # posture fights the drag
    own, other = replay(take, ARM, "arm7"), replay(take, ARM, "arm7", heavy)
    rms = [float(np.sqrt(np.mean(np.square(r.errors["ee"])))) for r in (own, other)]
    assert rms[1] > 2 * rms[0]
    assert other.q[0].tolist() != own.q[0].tolist() and other.skipped == 0


def test_limits_added_and_removed_during_a_take_replay_as_they_were() -> None:
    """The viewer's Joint ranges checkbox adds and removes a limit: a take of it replays
    the same states."""
    session = arm_session()
    session.remove_limit("configuration")
    session.start_take("toggles")
    session.set_target("ee", {"position": [0.9, 0.0, 0.9]})  # out of reach: joints move far
    live = []
    for k in range(90):
        if k == 30:
            session.add_limit({"type": "configuration", "name": "range"})
        if k == 60:
            session.remove_limit("range")
        live.append(session.step().q)
    take = session.stop_take()
    assert [e.kind for e in take.events] == ["target", "add_limit", "remove_limit"]
    assert replay(Take.model_validate_json(take.model_dump_json()), ARM, "arm7").q.tolist() == live
