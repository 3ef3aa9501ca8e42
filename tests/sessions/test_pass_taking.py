"""Which due steps a pass takes: changes first, at most ``MAX_BATCH`` in all, with
``CADENCE_SHARE`` places kept for cadence steps due; changes taken during a pass fill
its room only; extra steps up to ``EXTRA_PASS_S`` of smoothed cost."""

from __future__ import annotations

from collections import deque

from posekit.sessions.loops.due_queue import DueQueue
from posekit.sessions.loops.pass_taking import (
    CADENCE_SHARE,
    EXTRA_PASS_S,
    MAX_BATCH,
    Queue,
    Slots,
    take_changes_due,
    take_extra,
    take_pass,
)
from posekit.sessions.loops.session_slot import SessionSlot
from posekit.sessions.loops.solve_loop import Due, LoopSession
from support.busy_session import BusySession


def _queue(slots: Slots, prefix: str, count: int, start: float = 0.0) -> Queue:
    """``count`` sessions with a valid entry each, due 1 ms apart from ``start`` [s]."""
    queue: Queue = DueQueue()
    for i in range(count):
        session: LoopSession = BusySession(f"{prefix}{i}", cost=0.0)
        due = start + 0.001 * i
        slots[session] = SessionSlot(token=1, due=due)
        queue.push(due, 1, session)
    return queue


def _ids(taken: list[Due] | deque[Due]) -> list[str]:
    return [item[1].id for item in taken]


def test_a_flood_of_changes_leaves_the_cadence_steps_their_share() -> None:
    """With more changes and cadence steps due than a pass holds, the pass takes half
    its ``MAX_BATCH`` places in changes, first, and half in cadence steps
    (``CADENCE_SHARE``), each in due order; what it leaves stays queued for the next
    pass."""
    slots: Slots = {}
    changes, cadence = _queue(slots, "c", 300), _queue(slots, "k", 300)
    taken = take_pass(changes, cadence, slots, horizon=1.0)
    half = MAX_BATCH // 2
    assert CADENCE_SHARE == half
    assert _ids(taken) == [f"c{i}" for i in range(half)] + [f"k{i}" for i in range(half)]
    assert [item[2] for item in taken] == [True] * half + [False] * half
    assert all(slots[item[1]].due is None for item in taken)  # in flight
    assert len(changes) == 300 - half and len(cadence) == 300 - half


def test_the_room_either_side_leaves_goes_to_the_other() -> None:
    """Few cadence steps due: changes fill the rest of the pass; few changes: cadence
    steps do. Nothing due after ``horizon`` is taken."""
    slots: Slots = {}
    taken = take_pass(_queue(slots, "c", 300), _queue(slots, "k", 10), slots, 1.0)
    assert _ids(taken) == [f"c{i}" for i in range(MAX_BATCH - 10)] + [f"k{i}" for i in range(10)]
    slots = {}
    taken = take_pass(_queue(slots, "c", 10), _queue(slots, "k", 300), slots, 1.0)
    assert _ids(taken) == [f"c{i}" for i in range(10)] + [f"k{i}" for i in range(MAX_BATCH - 10)]
    slots = {}
    taken = take_pass(_queue(slots, "c", 10), _queue(slots, "k", 10), slots, 0.0045)
    assert _ids(taken) == [f"c{i}" for i in range(5)] + [f"k{i}" for i in range(5)]


def test_stale_entries_are_dropped_and_take_no_place() -> None:
    """An entry whose session was rescheduled (another token) or is in flight is
    dropped on the way and does not count against the pass's places."""
    slots: Slots = {}
    changes, cadence = _queue(slots, "c", 300), _queue(slots, "k", 5)
    for item in list(slots.items())[:100]:  # the first 100 changes: rescheduled
        item[1].token = 2
    slots[next(s for s in slots if s.id == "k0")].due = None  # in flight
    taken = take_pass(changes, cadence, slots, horizon=1.0)
    ids = _ids(taken)
    assert len(ids) == MAX_BATCH and "k0" not in ids and "c99" not in ids
    assert ids[: MAX_BATCH - 4] == [f"c{i}" for i in range(100, 100 + MAX_BATCH - 4)]
    assert ids[MAX_BATCH - 4 :] == ["k1", "k2", "k3", "k4"]


def test_changes_during_a_pass_fill_its_room_and_replace_later_steps() -> None:
    """Of the changes due during a pass, the first ``room`` are stepped next; a change
    to a session still waiting in the pass takes its place, and a replaced cadence
    step's due time is kept for the session's cadence to go on from."""
    slots: Slots = {}
    cadence = _queue(slots, "k", 6)
    pending: deque[Due] = deque(take_pass(DueQueue(), cadence, slots, 1.0))
    later = pending[4][1]  # "k4", waiting in the pass
    changes = _queue(slots, "c", 5, start=0.5)
    slots[later].due, slots[later].token = 0.4, 2
    changes.push(0.4, 2, later)
    taken = take_changes_due(changes, slots, pending, room=3, now=0.6)
    assert _ids(taken) == ["k4", "c0", "c1", "k0", "k1", "k2", "k3", "k5"]
    assert taken[0][2] and slots[later].replaced == 0.004
    assert len(changes) == 3  # c2..c4: the next pass
    assert take_changes_due(changes, slots, taken, room=0, now=0.6) is taken


def test_extra_steps_are_taken_up_to_their_cost() -> None:
    """A pass of extra steps takes due ones until their smoothed costs reach
    ``EXTRA_PASS_S`` (2 ms each: three), none due later than ``now``."""
    slots: Slots = {}
    extra = _queue(slots, "e", 10)
    taken = take_extra(extra, slots, now=1.0, cost=lambda session: 0.002)
    assert _ids(taken) == [f"e{i}" for i in range(int(EXTRA_PASS_S // 0.002) + 1)]
    later = _queue(slots, "f", 3, start=2.0)
    assert take_extra(later, slots, now=1.0, cost=lambda session: 0.0) == []
    assert len(later) == 3
