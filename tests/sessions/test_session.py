"""Session semantics without HTTP: specs ↔ engine objects, atomic changes, the solve step."""

from __future__ import annotations

import asyncio
import math

import numpy as np
import pytest
from posekit.api.stream_protocol import PongMessage
from posekit.ik.exceptions import PosekitError
from posekit.robots import RobotRegistry
from posekit.sessions import InvalidRequest, NameConflict, Session, SessionSpec, TaskNotFound
from posekit.sessions.live.tasks_snapshot import TasksSnapshot
from pydantic import ValidationError

REGISTRY = RobotRegistry(menagerie=False)
ARM = REGISTRY.model("arm7")
HUMANOID = REGISTRY.model("humanoid")
HOME = ARM.key_qpos[0].tolist()


def arm_session(**solver: object) -> Session:
    spec = SessionSpec.model_validate(
        {
            "robot": "arm7",
            "q": HOME,
            "tasks": [
                {"name": "ee", "type": "frame", "params": {"frame": "ee"}},
                {"name": "posture", "type": "posture", "params": {"cost": 1e-3}},
            ],
            "limits": [{"type": "configuration"}],
            "solver": solver,
        }
    )
    return Session("t", spec, ARM, "arm7")


def run_until_parked(session: Session, max_steps: int = 500) -> None:
    for _ in range(max_steps):
        if session.step().status != "running":
            return
    raise AssertionError("the session did not park")


ARM_TASKS = [
    {"type": "frame", "params": {"frame": "hand", "frame_type": "body"}},
    {"type": "relative_frame", "params": {"frame": "ee", "root": "link2"}},
    {"type": "com", "params": {"cost": [1, 1, 0]}},
    {"type": "look_at", "params": {"frame": "wrist_cam", "axis": [0, 0, -1]}},
    {"type": "axis_align", "params": {"frame": "ee"}},
    {"type": "dof_freezing", "params": {"joints": ["joint1", "joint7"]}},
    {"type": "posture", "params": {"cost": {"joint1": 0.1}}, "target": {"keyframe": "home"}},
    {"type": "damping", "params": {"cost": 0.01}},
    {"type": "kinetic_energy", "params": {"cost": 1e-5}},
]


@pytest.mark.parametrize("task", ARM_TASKS, ids=[t["type"] for t in ARM_TASKS])
def test_every_task_type_builds_solves_and_round_trips(task: dict) -> None:
    session = arm_session()
    added = session.add_task(task)
    assert added.name in [t.name for t in session.tasks()]
    assert (added.target is None) == (task["type"] in ("dof_freezing", "damping", "kinetic_energy"))
    assert added.role == ("constraint" if task["type"] == "dof_freezing" else "objective")
    state = session.step()
    assert state.status in ("running", "converged") and state.error is None
    assert added.name in state.errors
    restored = Session("r", session.spec(), ARM, "arm7")
    assert restored.spec().model_dump() == session.spec().model_dump()


def test_humanoid_limits_and_free_joint_names() -> None:
    spec = SessionSpec.model_validate(
        {
            "robot": "humanoid",
            "q": HUMANOID.key_qpos[0].tolist(),
            "tasks": [{"type": "com"}, {"type": "frame", "params": {"frame": "left_foot"}}],
            "limits": [
                {"type": "configuration"},
                {
                    "type": "free_joint_velocity",
                    "params": {"joint": "root", "max_linear_velocity": 0.5},
                },
                {"type": "velocity", "params": {"velocities": {"left_knee": 2.0}}},
                {
                    "type": "collision_avoidance",
                    "params": {"geom_pairs": [[["left_foot"], ["right_foot"]]]},
                },
            ],
        }
    )
    session = Session("h", spec, HUMANOID, "humanoid")
    assert [t.name for t in session.tasks()] == ["com", "left_foot"]
    assert [lim.name for lim in session.limits()] == [
        "configuration",
        "free_joint_velocity",
        "velocity",
        "collision_avoidance",
    ]
    assert session.step().status == "converged"


def test_auto_names_are_unique_and_explicit_duplicates_conflict() -> None:
    session = arm_session()
    assert session.add_task({"type": "frame", "params": {"frame": "ee"}}).name == "ee_2"
    assert session.add_task({"type": "look_at", "params": {"frame": "ee"}}).name == "look_at_ee"
    with pytest.raises(NameConflict):
        session.add_task({"name": "posture", "type": "posture"})


def _snapshot(session: Session) -> tuple[dict, int]:
    return session.spec().model_dump(), session.revision


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (
            lambda s: s.patch_task("ee", {"position_cost": 5.0, "target": {"wxyz": [0, 0, 0, 0]}}),
            PosekitError,
        ),
        (lambda s: s.patch_task("ee", {"gain": 0.5, "cost": 1.0}), InvalidRequest),
        (lambda s: s.patch_task("posture", {"cost": {"joint1": 1.0, "nope": 2.0}}), PosekitError),
        (lambda s: s.patch_task("ee", {"target": {"position": [0, 0, math.inf]}}), ValidationError),
        (lambda s: s.add_task({"type": "frame", "params": {"frame": "nope"}}), PosekitError),
        (lambda s: s.add_task({"type": "posture", "target": {"q": [0.0]}}), PosekitError),
        (lambda s: s.patch_limit("configuration", {"gain": 0.5, "speed": 1}), InvalidRequest),
        (lambda s: s.set_solver({"rate_hz": 30, "solver": "nope"}), ValidationError),
        (lambda s: s.set_q(q=[0.0] * 7, keyframe="home"), InvalidRequest),
        (lambda s: s.set_target("nope", {"position": [0, 0, 0]}), TaskNotFound),
        (lambda s: s.remove_limit("nope"), PosekitError),
    ],
)
def test_rejected_changes_leave_the_session_exactly_as_it_was(change, error) -> None:
    session = arm_session()
    before = _snapshot(session)
    with pytest.raises(error):
        change(session)
    assert _snapshot(session) == before


def test_a_patch_applies_all_fields_together() -> None:
    session = arm_session()
    spec = session.patch_task(
        "ee",
        {
            "position_cost": [1, 2, 3],
            "gain": 0.5,
            "enabled": False,
            "role": "constraint",
            "target": {"position": [0.4, 0.1, 0.3]},
        },
    )
    assert spec.params.position_cost == [1, 2, 3] and spec.params.gain == 0.5
    assert spec.enabled is False and spec.role == "constraint"
    assert spec.target.position == [0.4, 0.1, 0.3]
    assert spec.target.wxyz == pytest.approx(session.task("ee").target.wxyz)
    assert session.state.errors  # disabled tasks report None
    assert session.step().errors["ee"] is None


def test_a_failed_solve_keeps_q_and_recovers() -> None:
    session = arm_session()
    session.add_limit(
        {
            "name": "slow",
            "type": "velocity",
            "params": {"velocities": {f"joint{i}": 0.01 for i in range(1, 8)}},
        }
    )
    target = np.add(session.task("ee").target.position, [0, 0.3, 0]).tolist()
    session.patch_task("ee", {"role": "constraint", "target": {"position": target}})
    q = session.q.copy()
    state = session.step()
    assert state.status == "failed" and "failed to find a solution" in state.error
    assert state.q == q.tolist() and np.array_equal(session.q, q)
    session.remove_limit("slow")
    run_until_parked(session)
    assert session.state.status == "converged" and session.state.error is None


def test_the_session_parks_at_a_fixed_point_without_moving() -> None:
    session = arm_session()
    session.set_target("ee", {"position": [0.45, 0.1, 0.35]})
    run_until_parked(session)
    q = session.q.copy()
    state = session.step()  # still at the fixed point: no motion at all
    assert state.converged and np.array_equal(session.q, q)


def test_paused_sessions_do_not_solve() -> None:
    session = arm_session(paused=True)
    session.set_target("ee", {"position": [0.45, 0.1, 0.35]})
    q = session.q.copy()
    assert session.step().status == "paused"
    assert np.array_equal(session.q, q)
    session.set_q(keyframe="home")
    session.set_solver({"paused": False})
    assert session.step().status == "running"


def test_the_period_and_state_rate_follow_every_solver_change() -> None:
    session = arm_session(rate_hz=30)
    assert session.period == 1 / 30 and session.step().rate_hz == 30.0
    session.set_solver({"rate_hz": 120})
    assert session.period == 1 / 120 and session.step().rate_hz == 120.0
    session.set_solver({"tolerance": 1.0})  # every step is below it now
    assert session.step().status == "converged"
    session.replace_spec({**session.spec().model_dump(), "solver": {"rate_hz": 50.0}})
    assert session.period == 1 / 50 and session.solver.rate_hz == 50.0
    assert session.step().rate_hz == 50.0


def test_kinetic_energy_task_follows_the_solver_dt() -> None:
    session = arm_session()
    session.add_task({"name": "energy", "type": "kinetic_energy"})
    session.set_solver({"dt": 0.02})
    assert session.engine_task("energy").dt == 0.02  # type: ignore[attr-defined]


def test_subscriptions_keep_only_the_latest_state() -> None:
    async def scenario() -> None:
        session = arm_session()
        subscription = session.subscribe()
        session.set_target("ee", {"position": [0.45, 0.2, 0.3]}, ref="r1")
        session.patch_task("posture", {"cost": 0.002})
        session.patch_task("posture", {"cost": 0.003})
        for _ in range(50):
            session.step()
        assert subscription.pending() == 2  # one state, one tasks snapshot
        update = await subscription.next()
        assert update.state is session.state and update.state.ref == "r1"
        assert [type(m) for m in update.messages] == [TasksSnapshot]
        snapshot = update.messages[0]
        assert isinstance(snapshot, TasksSnapshot)
        assert snapshot.tasks[1].params.cost == 0.003  # type: ignore[attr-defined]
        subscription.close()
        assert session.watchers == 0
        session.close()

    asyncio.run(scenario())


def test_a_state_offered_while_waiting_for_a_token_ends_the_wait() -> None:
    """The stream writer waits for a token with ``newer_state``: a state answering a
    change must end that wait at once; other messages stay queued."""

    async def scenario() -> None:
        session = arm_session()
        subscription = session.subscribe(initial_state=False)
        loop = asyncio.get_running_loop()
        assert await subscription.newer_state(0.01) is None
        pong = PongMessage(time=0.0)
        loop.call_later(0.05, subscription.offer_message, pong)
        loop.call_later(0.1, lambda: session.set_target("ee", {"position": [0.4, 0.1, 0.3]}, "r"))
        loop.call_later(0.15, session.step)
        # far shorter than the wait asked for
        state = await asyncio.wait_for(subscription.newer_state(60.0), 5.0)
        assert state is session.state and state.ref == "r"
        update = await subscription.next()
        assert update.messages == [pong]
        assert update.state is None
        subscription.close()
        session.close()

    asyncio.run(scenario())


def test_a_wait_for_a_state_that_times_out_ends_when_it_times_out() -> None:
    """``newer_state`` ends when its time is up, even if the loop's clock (uvloop's:
    milliseconds) has not reached the deadline yet."""

    class StillLoop:
        def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
            self.loop = loop

        def __getattr__(self, name: str) -> object:
            return getattr(self.loop, name)

        def time(self) -> float:
            return 0.0  # a clock that has not moved (as a coarse one within its tick)

    async def scenario() -> None:
        from posekit.sessions.live.subscription import Subscription

        loop = StillLoop(asyncio.get_running_loop())
        subscription = Subscription(loop, lambda s: None)  # type: ignore[arg-type]
        assert await asyncio.wait_for(subscription.newer_state(0.01), 5.0) is None

    asyncio.run(scenario())


def test_waiting_for_a_state_on_an_ended_feed_returns_at_once() -> None:
    async def scenario() -> None:
        session = arm_session()
        subscription = session.subscribe(initial_state=False)
        session.close("bye")
        assert await asyncio.wait_for(subscription.newer_state(60.0), 5.0) is None

    asyncio.run(scenario())


def test_closing_a_session_ends_its_subscriptions() -> None:
    async def scenario() -> None:
        session = arm_session()
        subscription = session.subscribe(initial_state=False)
        session.close("bye")
        with pytest.raises(StopAsyncIteration):
            await subscription.next()
        assert subscription.close_reason == "bye"

    asyncio.run(scenario())


def test_replace_spec_swaps_everything_or_nothing() -> None:
    source = arm_session()
    source.add_task({"name": "camera", "type": "look_at", "params": {"frame": "wrist_cam"}})
    source.set_q(q=[0.1, 0.5, 0.0, -1.0, 0.0, 1.2, 0.0])
    spec = source.spec()
    session = arm_session(rate_hz=30)
    before = _snapshot(session)
    broken = spec.model_dump()
    broken["tasks"][2]["params"]["frame"] = "nope"
    with pytest.raises(PosekitError):
        session.replace_spec(broken)
    with pytest.raises(InvalidRequest):
        session.replace_spec({**spec.model_dump(), "robot": "humanoid"})
    assert _snapshot(session) == before
    assert session.replace_spec(spec).model_dump() == spec.model_dump()
    assert session.spec().model_dump() == spec.model_dump()
    assert session.revision == before[1] + 1
