"""Extra steps: in a solver process, throttled sessions also get the loop's time left over."""

from __future__ import annotations

import time

from posekit.sessions.changes import SetQ
from posekit.sessions.loops.pass_taking import EXTRA_PASS_S
from posekit.sessions.loops.scheduler import Scheduler
from posekit.sessions.loops.session_slot import SLOWED
from posekit.sessions.state import SessionState
from support.busy_session import BusySession
from support.drive import drive

RATE_HZ = 60.0


NAP = 0.01  # [s] the longest sleep between two passes


def _warm(scheduler: Scheduler, sessions: list[BusySession]) -> None:
    """Attach ``sessions`` and step them until the fair share knows every cost."""
    for session in sessions:
        scheduler.attach(session)
    deadline = time.monotonic() + 20.0
    while min(len(s.states) for s in sessions) < 3:
        assert time.monotonic() < deadline, "the sessions were not stepped"
        drive(scheduler, 0.05, NAP)
    for session in sessions:
        session.states.clear()


def _heavy_steps(extra_steps: bool) -> tuple[list[int], list[SessionState]]:
    """Steps in 1.5 s of three sessions demanding 0.18 s/s each beside a light one (0.0018
    s/s, which the fair share protects) on a loop whose capacity is 0.06 s/s (each heavy
    one throttled to 0.0194 s/s: 6.5 steps a second), and their last states.

    The light one is protected only while its smoothed cost stays under the level's
    ``1 / ALIKE`` (218 µs); a step during which the thread lost its core is charged up to
    ``OUTLIER`` times that cost, so at 100 µs a few such steps on a loaded machine made it
    look alike (seen: 212 µs) and nobody was throttled. At 30 µs it stays at 41–52 µs."""
    heavy = [BusySession(f"heavy{i}", cost=0.003) for i in range(3)]
    scheduler = Scheduler(capacity=0.06, extra_steps=extra_steps)
    _warm(scheduler, [*heavy, BusySession("light", cost=0.00003)])
    drive(scheduler, 1.5, NAP)
    return [len(s.states) for s in heavy], [s.states[-1] for s in heavy]


def test_throttled_sessions_take_the_time_the_loop_has_left_over() -> None:
    """With extra steps the three throttled sessions are stepped far more often than
    their fair share's period (together they demand about half of a core, which an
    idle loop has); without, at that period. Their states stay ``throttled`` and say
    the rate they get."""
    capped, capped_states = _heavy_steps(extra_steps=False)
    extra, extra_states = _heavy_steps(extra_steps=True)
    assert max(capped) <= 1.5 * 6.7 * 1.5 + 2, capped
    assert min(extra) >= 3 * max(capped), (extra, capped)
    assert all(state.throttled for state in capped_states + extra_states)
    assert all(state.rate_hz < 10.0 for state in capped_states), capped_states
    assert all(state.rate_hz > 20.0 for state in extra_states), extra_states
    assert all(state.rate_hz <= RATE_HZ for state in extra_states)
    assert max(extra) - min(extra) <= 0.2 * max(extra) + 2, extra  # evenly shared


def test_light_sessions_keep_their_rate_beside_extra_steps() -> None:
    """Light sessions are never throttled and are stepped at their rate while heavy ones
    fill the rest of the loop with extra steps."""
    heavy = [BusySession(f"heavy{i}", cost=0.004) for i in range(4)]
    light = [BusySession(f"light{i}", cost=0.0002) for i in range(5)]
    scheduler = Scheduler(capacity=0.2, extra_steps=True)
    _warm(scheduler, heavy + light)
    window = 1.5
    drive(scheduler, window, NAP)
    for session in light:
        assert len(session.states) >= 0.8 * RATE_HZ * window, len(session.states)
        assert not any(state.throttled for state in session.states)
        # Their rate_hz is theirs once its smoothing forgot the warm-up, when the fair
        # share did not yet know the costs and they waited for the heavy ones; a step
        # late behind a heavy one (or a machine busy with other work) may report the
        # rate it gets for a state or two, once under 0.9 of its own (SLOWED).
        later = [state.rate_hz for state in session.states[len(session.states) // 2 :]]
        assert all(rate == RATE_HZ or rate < SLOWED * RATE_HZ for rate in later), later
        assert later.count(RATE_HZ) >= 0.75 * len(later), later
    # Each heavy one's fair share: (0.2 - 5 × 0.012) / 4 = 0.035 s/s, 8.75 steps a second.
    assert min(len(s.states) for s in heavy) >= 2 * 8.75 * window


def test_a_pass_of_extra_steps_takes_about_extra_pass_s_of_steps() -> None:
    """Ten throttled sessions whose own-rate steps are all due, none of their fair-share
    steps: one call of ``step_due`` runs one pass of extra steps, as many as their
    smoothed costs need to reach ``EXTRA_PASS_S`` (2 ms each: three), not all ten."""
    heavy = [BusySession(f"heavy{i}", cost=0.002) for i in range(10)]
    scheduler = Scheduler(capacity=0.001, extra_steps=True)  # fair share: once a second
    scheduler.fair_share.ceiling = True  # throttled alike with nobody to protect: a test
    passes: list[list[object]] = []
    scheduler.on_pass = lambda stepped: passes.append(list(stepped))
    _warm(scheduler, heavy)
    time.sleep(1.5 / RATE_HZ)  # every own-rate step is due; the next fair-share one in ~1 s
    passes.clear()
    assert scheduler.step_due() == 0.0
    expected = int(EXTRA_PASS_S // 0.002) + 1
    assert len(passes) == 1 and len(passes[0]) == expected, passes


def test_changes_to_a_throttled_session_are_answered_with_extra_steps() -> None:
    """Three throttled sessions (6 steps a second each at their fair share, beside a
    light one) changed every 10 ms: a change takes the place of the session's pending
    steps, and with extra steps it is also due one period of the session's own after its
    previous step, so the loop, which has the time, answers it far more often than the
    fair share's period would, and never steps it above its own rate (with half a period,
    as a session that is not throttled, each change answered early added a step: 16 G1
    sessions dragged at 20 Hz got 62.7 states/s of their 60)."""
    heavy = [BusySession(f"heavy{i}", cost=0.003) for i in range(3)]
    scheduler = Scheduler(capacity=0.06, extra_steps=True)
    _warm(scheduler, [*heavy, BusySession("light", cost=0.0001)])
    window, end = 1.5, time.monotonic() + 1.5
    while time.monotonic() < end:
        for session in heavy:
            scheduler.changed(session, SetQ([]))
        drive(scheduler, 0.01, NAP)
    counts = [len(s.states) for s in heavy]
    assert min(counts) >= 4 * 6 * window, counts
    assert max(counts) <= RATE_HZ * window + 3, counts


def test_sessions_that_cost_alike_are_not_throttled_in_a_solver_process() -> None:
    """Three sessions overloading the loop together, with nobody light to protect: in a
    solver process (extra steps) none is throttled and the loop steps them round-robin,
    evenly; with the capacity as a ceiling (the thread loop) each is throttled."""
    for extra_steps in (True, False):
        heavy = [BusySession(f"heavy{i}", cost=0.003) for i in range(3)]
        scheduler = Scheduler(capacity=0.06, extra_steps=extra_steps)
        _warm(scheduler, heavy)
        drive(scheduler, 1.0, NAP)
        states = [state for session in heavy for state in session.states]
        assert states and all(state.throttled is not extra_steps for state in states)
        if extra_steps:
            counts = [len(s.states) for s in heavy]
            assert min(counts) >= 0.8 * RATE_HZ and max(counts) - min(counts) <= 3, counts


def test_sessions_slowed_alike_report_the_rate_they_get() -> None:
    """Three sessions of 10 ms a step at 60 Hz ask for 1.8 s of steps a second from a loop
    of one core: none is throttled (they cost alike, the loop steps them round-robin), each
    gets about a third of the core, and its states say in ``rate_hz`` the rate it gets
    (smoothed), not its own 60."""
    alike = [BusySession(f"alike{i}", cost=0.010) for i in range(3)]
    scheduler = Scheduler(capacity=0.06, extra_steps=True)
    _warm(scheduler, alike)
    window = 1.5
    drive(scheduler, window, NAP)
    for session in alike:
        got = len(session.states) / window
        last = session.states[-1]
        assert not last.throttled and got < 0.8 * RATE_HZ, (last, got)
        assert 0.7 * got <= last.rate_hz <= 1.3 * got, (got, last.rate_hz)
