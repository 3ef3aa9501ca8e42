"""The solver process's hot path: states cross the pipe as plain tuples and come back
whole, the state message keeps its field order, a step reuses its compiled plan and
gives the numbers ``solve_ik`` gives, and every stepped session's CPU time is charged."""

from __future__ import annotations

import inspect
import pickle
import pickletools
import time

import numpy as np
import posekit
import pytest
from posekit.ik.configuration import Configuration
from posekit.ik.solve import solve_ik
from posekit.robots import RobotRegistry
from posekit.sessions import SessionState
from posekit.sessions.loops.messages import Solved, StateRows, States
from posekit.sessions.loops.scheduler import Scheduler
from posekit.sessions.solver_settings import SolverSettings
from posekit.sessions.state import STATE_FIELDS, from_wire, new_state
from posekit.sessions.step import Plan, StepSettings, solve_step
from support.busy_session import BusySession
from support.models import drifting_configuration

ARM = RobotRegistry().model("arm7")


def a_state(seq: int) -> SessionState:
    state = SessionState(
        seq, 1.5e9, [0.1, -0.2], {"ee": 0.25, "posture": None}, False, "running",
        None, 12.5, {"drag": seq}, 42, True, 30.0,
    )  # fmt: skip
    state.json()
    return state


def test_states_pickle_as_plain_tuples_and_come_back_whole() -> None:
    message = States([Solved(f"s{i}", i, a_state(i)) for i in range(3)])
    data = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
    reductions = [op.name for op, _, _ in pickletools.genops(data) if op.name == "REDUCE"]
    assert len(reductions) == 1  # one for the message, none per state
    copy = pickle.loads(data)
    assert isinstance(copy, States) and copy == message
    for solved, original in zip(copy.states, message.states, strict=True):
        assert isinstance(solved, Solved) and isinstance(solved.state, SessionState)
        assert solved.state.json() == original.state.json()
        assert solved.state.wire() == original.state.wire()  # the encodings came along


def test_a_wire_tuple_restores_the_state() -> None:
    state = a_state(5)
    state.binary()
    copy = from_wire(state.wire())
    assert copy == state and copy.wire() == state.wire()


def test_the_state_message_lists_its_fields_in_order() -> None:
    assert list(a_state(1).message()) == ["type", *STATE_FIELDS]


def a_plan(configuration: Configuration) -> Plan:
    ee = posekit.FrameTask("ee", "site", position_cost=1.0, orientation_cost=0.1)
    target = configuration.get_transform_frame_to_world("ee", "site")
    target.translation()[1] += 0.1  # a view: moves the target 10 cm
    ee.set_target(target)
    posture = posekit.PostureTask(ARM, 1e-2)
    posture.set_target_from_configuration(configuration)
    tasks = [ee, posture]
    limits = [posekit.ConfigurationLimit(ARM)]
    return Plan(tasks, [], limits, [("ee", ee), ("posture", posture)], [], ["ee", "posture"])


def test_a_step_reuses_its_compiled_plan_and_matches_solve_ik() -> None:
    configuration, reference = Configuration(ARM), Configuration(ARM)
    plan, reference_plan = a_plan(configuration), a_plan(reference)
    settings = SolverSettings()
    for _ in range(3):
        outcome = solve_step(plan, configuration, settings)
        velocity = solve_ik(
            reference,
            reference_plan.objectives,
            settings.step_dt,
            settings.solver,
            damping=settings.damping,
            limits=reference_plan.limits,
        )
        reference.integrate_inplace(velocity, settings.step_dt)
        assert outcome.status == "running"
        np.testing.assert_array_equal(configuration.data.qpos, reference.data.qpos)
        assert outcome.q == configuration.data.qpos.tolist()  # the q the state publishes
    assert len(plan.compiled) == 1
    first = plan.compiled[0][1]
    solve_step(plan, configuration, settings)
    assert plan.compiled[0][1] is first
    solve_step(plan, configuration, SolverSettings(rate_hz=30.0))  # another dt: another plan
    assert plan.compiled[0][1] is not first


def test_every_stepped_session_is_charged_its_cpu_time() -> None:
    """Each session's share is charged its own step (and a little bookkeeping), read on
    one CPU clock shared by consecutive steps."""
    scheduler = Scheduler()
    costs = [0.001, 0.002, 0.003]
    sessions = [BusySession(f"b{i}", cost) for i, cost in enumerate(costs)]
    for session in sessions:
        scheduler.attach(session)
    while scheduler.steps < 3 * len(sessions):
        delay = scheduler.step_due()
        if delay:
            time.sleep(min(delay, 0.02))
    for session in sessions:
        period, throttled = scheduler.fair_share.period(session, session.period)
        assert not throttled and period == session.period
    demand = scheduler.fair_share.total_demand()  # Σ cost × 60 Hz over the three
    # A pass's CPU time is shared out by its steps' wall times: when more than one step
    # of a pass lost its core (two CPU burners beside the test), the one charged the
    # rest is charged a little less than it burned (seen: 1.4 % of the total under).
    assert 0.95 * 60 * sum(costs) <= demand < 60 * (sum(costs) + 3 * 0.002)


def test_state_rows_arrive_as_the_states_they_were_made_of() -> None:
    """A solver process sends its states as rows; the server process gets States."""
    states = [a_state(i) for i in range(3)]
    rows = [(f"s{i}", i, state.wire()) for i, state in enumerate(states)]
    copy = pickle.loads(pickle.dumps(StateRows(rows), pickle.HIGHEST_PROTOCOL))
    assert copy == States([Solved(f"s{i}", i, state) for i, state in enumerate(states)])
    assert [solved.state.json() for solved in copy.states] == [s.json() for s in states]


def test_a_step_publishes_the_q_it_left() -> None:
    """Converged: the q before the step; running: the q after it."""
    configuration = Configuration(ARM)
    plan, settings = a_plan(configuration), SolverSettings()
    before = configuration.data.qpos.copy()
    parked = solve_step(plan, configuration, SolverSettings(tolerance=1.0))
    assert parked.status == "converged" and parked.q == before.tolist()
    moved = solve_step(plan, configuration, settings)
    assert moved.status == "running" and moved.q == configuration.data.qpos.tolist()
    assert moved.q != before.tolist()


@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_a_non_finite_integration_fails_and_puts_q_back(engine: str) -> None:
    """The step is finite and its integration is not: failed, with the reason, q back
    where it was bit for bit, and that q published (the compiled call hands such a step
    to the road that says why)."""
    configuration = drifting_configuration()
    model = configuration.model
    tip = posekit.FrameTask("tip", "site", position_cost=1.0, orientation_cost=0.0)
    target = configuration.get_transform_frame_to_world("tip", "site")
    target.translation()[1] += 0.05
    tip.set_target(target)
    plan = Plan([tip], [], [posekit.ConfigurationLimit(model)], [("tip", tip)], [], ["tip"])
    kept = configuration.data.qpos.copy()
    with posekit.using_engine(engine):
        failed = solve_step(plan, configuration, SolverSettings())
    assert failed.status == "failed" and "non-finite q" in (failed.error or "")
    assert configuration.data.qpos.tobytes() == kept.tobytes()
    assert failed.q == kept.tolist()


def test_step_settings_carry_what_a_step_reads() -> None:
    settings = SolverSettings(rate_hz=120.0, damping=1e-3, tolerance=1e-4, paused=True)
    plain = StepSettings.of(settings)
    assert plain == ("daqp", settings.step_dt, 1e-3, 1e-4, True, 120.0)
    timed = SolverSettings(dt=0.005)
    assert StepSettings.of(timed).step_dt == timed.step_dt == 0.005
    one, other = Configuration(ARM), Configuration(ARM)
    for _ in range(3):  # the same numbers from either form
        a = solve_step(a_plan(one), one, settings.model_copy(update={"paused": False}))
        b = solve_step(a_plan(other), other, plain._replace(paused=False))
        assert a.q == b.q and a.errors == b.errors and a.status == b.status


def test_a_step_converges_exactly_below_the_tolerance() -> None:
    """max |v_i| dt < tolerance, to the last bit: a step whose largest move equals the
    tolerance runs, one a bit above it converges."""
    reference = Configuration(ARM)
    settings = SolverSettings()
    plan = a_plan(reference)
    velocity = solve_ik(
        reference, plan.objectives, settings.step_dt, "daqp",
        damping=settings.damping, limits=plan.limits,
    )  # fmt: skip
    largest = float(np.max(np.abs(velocity))) * settings.step_dt
    for tolerance, status in [(largest, "running"), (np.nextafter(largest, 1.0), "converged")]:
        configuration = Configuration(ARM)
        tight = settings.model_copy(update={"tolerance": float(tolerance)})
        assert solve_step(a_plan(configuration), configuration, tight).status == status


def test_new_state_is_the_dataclass_constructor() -> None:
    assert tuple(inspect.signature(new_state).parameters) == STATE_FIELDS
    fields = (7, 1.5e9, [0.1, -0.2], {"ee": 0.25, "posture": None}, False, "failed",
              "why", 12.5, {"drag": 1}, 42, True, 30.0)  # fmt: skip
    made, constructed = new_state(*fields), SessionState(*fields)
    assert type(made) is SessionState and made == constructed
    assert made.wire() == constructed.wire() and made.wire()[-2:] == (None, None)
    assert made.json_bytes() == constructed.json_bytes()
