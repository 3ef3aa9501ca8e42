"""An asyncio event loop running on a thread of its own.

The solver pipes are read by an event loop (:mod:`~posekit.sessions.loops.pipe_channel`):
the app's, when the solver processes are started from it (the app's lifespan). Started
from plain code (a script, a test, no loop running), they get this one instead; their
states then reach the watchers' loops with a thread hop, as any producer's on another
thread do (:class:`~posekit.sessions.subscription.SignalBatch`).
"""

from __future__ import annotations

import asyncio
import threading


class EventLoopThread:
    """A new event loop, run forever on a daemon thread until :meth:`stop`."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            self.loop.close()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop (after the callbacks already scheduled) and wait for its thread."""
        try:
            self.loop.call_soon_threadsafe(self.loop.stop)
        except RuntimeError:  # already closed
            return
        self._thread.join(timeout)
