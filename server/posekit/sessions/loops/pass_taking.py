"""Which due steps one pass of the scheduler takes, and in what order.

A pass steps at most ``MAX_BATCH`` sessions, changes (sessions woken by a new target,
weight, task…) before cadence steps, except that cadence steps due keep
``CADENCE_SHARE`` of its places against a flood of changes (:func:`take_pass`). While
the pass has room, a change that comes due during it is stepped next, in place of its
session's step later in the pass (:func:`take_changes_due`); one that comes due once the
pass is full is the first step of the next pass.

Why both bounds: past saturation nearly every session's next change is due whenever a
pass starts. Taking them all, a pass answered every change and stepped no cadence, each
state answered the target that was due, the clients' next targets came due together,
and the sessions went on in step, in waves of long passes, with up to a third fewer
states in all (README, Sessions: *A share of each pass for cadence steps*). Bounded,
with half of each pass kept for cadence steps, the total held at every level of
sustained overload.

Every function here runs with the scheduler's lock held. An entry is valid while its
session's slot carries its token and is not in flight; popping it puts the slot in
flight (``due`` None).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from posekit.sessions.loops.due_queue import DueQueue
from posekit.sessions.loops.session_slot import SessionSlot
from posekit.sessions.loops.solve_loop import Due, LoopSession

# Sessions stepped per pass at most, the changes taken during it included. The pass's
# states go to the server process as one batch, so under overload larger passes mean
# fewer batches and answers per state (at 800 eager sessions, 128 rather than 32 gave
# 5-12 % more states in all).
MAX_BATCH = 128
# Of a pass's MAX_BATCH places, cadence steps due keep this many against changes.
CADENCE_SHARE = MAX_BATCH // 2
EXTRA_PASS_S = 0.005  # [s] of smoothed step costs taken for one pass of extra steps

Queue = DueQueue[LoopSession]
Slots = dict[LoopSession, SessionSlot]


def pop_due(
    queue: Queue, slots: Slots, urgent: bool, horizon: float, most: int, due: list[Due]
) -> None:
    """Move ``queue``'s valid entries due by ``horizon`` [s, monotonic] onto ``due``, in
    due order, while it holds fewer than ``most``; stale entries met on the way are
    dropped."""
    times = queue.times
    while times and len(due) < most and times[0] <= horizon:
        at, token, session = queue.pop()
        slot = slots.get(session)
        if slot is not None and slot.token == token and slot.due is not None:
            slot.due = None  # in flight
            due.append((at, session, urgent))


def take_pass(changes: Queue, cadence: Queue, slots: Slots, horizon: float) -> list[Due]:
    """A new pass: the changes due by ``horizon``, then the cadence steps, at most
    ``MAX_BATCH`` in all, of which the cadence steps due keep up to ``CADENCE_SHARE``."""
    kept: list[Due] = []
    pop_due(cadence, slots, False, horizon, CADENCE_SHARE, kept)
    taken: list[Due] = []
    pop_due(changes, slots, True, horizon, MAX_BATCH - len(kept), taken)
    taken += kept
    pop_due(cadence, slots, False, horizon, MAX_BATCH, taken)
    return taken


def take_changes_due(
    changes: Queue, slots: Slots, pending: deque[Due], room: int, now: float
) -> deque[Due]:
    """During a pass: the changes due by ``now`` (the first ``room`` of them), then
    ``pending`` without the steps they take the place of. A replaced cadence step's due
    time is what its session's cadence goes on from (``SessionSlot.replaced``), as when a
    change replaces a queued cadence step."""
    taken: list[Due] = []
    pop_due(changes, slots, True, now, room, taken)
    if not taken:
        return pending
    again = {item[1] for item in taken}
    rest: deque[Due] = deque()
    for item in pending:
        if item[1] not in again:
            rest.append(item)
        elif not item[2] and (slot := slots.get(item[1])) is not None:
            slot.replaced = item[0]
    rest.extendleft(reversed(taken))
    return rest


def take_extra(
    extra: Queue, slots: Slots, now: float, cost: Callable[[LoopSession], float]
) -> list[Due]:
    """A pass of extra steps: throttled sessions whose own-rate step is due by ``now``,
    in due order, until their smoothed ``cost`` [s] adds up to ``EXTRA_PASS_S`` (at most
    ``MAX_BATCH``; nothing else is due)."""
    taken: list[Due] = []
    total = 0.0
    times = extra.times
    while times and times[0] <= now and total < EXTRA_PASS_S and len(taken) < MAX_BATCH:
        before = len(taken)
        pop_due(extra, slots, False, now, before + 1, taken)
        if len(taken) > before:
            total += cost(taken[-1][1])
    return taken
