"""A minimal solved state, for tests of how states travel (subscriptions, the stream)."""

from __future__ import annotations

from posekit.sessions.live.state import SessionState


def running_state(seq: int, revision: int = 0) -> SessionState:
    """A running state number ``seq`` of session revision ``revision`` (one joint at 0)."""
    return SessionState(
        seq=seq,
        time=0.0,
        q=[0.0],
        errors={},
        converged=False,
        status="running",
        error=None,
        solve_us=1.0,
        revision=revision,
    )
