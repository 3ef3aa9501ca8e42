"""A session's websocket stream that reconnects on its own, as a client of a cluster
should: when the connection drops or is refused (the owner died, its lease has not
expired yet and the proxy ran out of tries), it waits and tries again, the wait doubling
from ``first_wait_s`` up to ``max_wait_s`` and starting over after a connection that
worked. Runs on a thread; records every state with the monotonic time it arrived.

A parked (converged) session sends no states, so on every connection the client sends
the frame task ``nudge_task`` its target as the hello gives it: a change that changes
nothing, which wakes the session and is answered by a state."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from typing import Any

from websockets.exceptions import WebSocketException
from websockets.sync.client import ClientConnection, connect


class ReconnectingStream:
    """Reads ``url`` (a ``/api/sessions/{id}/stream`` websocket) until :meth:`close`."""

    def __init__(
        self, url: str, headers: Mapping[str, str] | None = None,
        first_wait_s: float = 0.1, max_wait_s: float = 1.0, nudge_task: str | None = "ee",
    ) -> None:  # fmt: skip
        self.url = url
        self.nudge_task = nudge_task
        self.headers = dict(headers or {})
        self.first_wait_s = first_wait_s
        self.max_wait_s = max_wait_s
        self.states: list[tuple[float, dict[str, Any]]] = []
        self.connections = 0  # connections that got their hello
        self.refusals = 0  # connection attempts that failed or were refused
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> ReconnectingStream:
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()
        self._thread.join(10)

    def states_since(self, moment: float) -> list[dict[str, Any]]:
        """States that arrived after ``moment`` (``time.monotonic()``)."""
        with self._lock:
            return [state for arrived, state in self.states if arrived > moment]

    def first_state_after(self, moment: float) -> float | None:
        """When the first state after ``moment`` arrived, or None."""
        with self._lock:
            return next((arrived for arrived, _ in self.states if arrived > moment), None)

    def _run(self) -> None:
        wait = self.first_wait_s
        while not self._closing.is_set():
            try:
                self._read_one_connection()
                wait = self.first_wait_s
            except (OSError, TimeoutError, WebSocketException):
                with self._lock:
                    self.refusals += 1
            self._closing.wait(wait)
            wait = min(self.max_wait_s, wait * 2)

    def _read_one_connection(self) -> None:
        with connect(
            self.url, additional_headers=self.headers, open_timeout=5, close_timeout=1
        ) as websocket:
            hello = json.loads(websocket.recv(timeout=5))
            if hello.get("type") != "hello":
                raise WebSocketException(f"first message {hello.get('type')!r}, not hello")
            with self._lock:
                self.connections += 1
            self._nudge(websocket, hello)
            while not self._closing.is_set():
                try:
                    raw = websocket.recv(timeout=0.5)
                except TimeoutError:
                    continue
                message = json.loads(raw)
                if message.get("type") == "state":
                    with self._lock:
                        self.states.append((time.monotonic(), message))

    def _nudge(self, websocket: ClientConnection, hello: dict[str, Any]) -> None:
        task = next((t for t in hello.get("tasks", []) if t.get("name") == self.nudge_task), None)
        if task is None or not task.get("target"):
            return
        message = {"type": "target", "task": self.nudge_task,
                   "position": task["target"]["position"], "ref": self.connections}  # fmt: skip
        websocket.send(json.dumps(message))
