"""Targets dragged over the websocket survive kill -9 once they were answered 0.5 s ago.

A client drags a session's end effector over its stream, each target a little further
along x and tagged with its index as ``ref``; the states echo the ``ref`` of the latest
target applied. The server is killed with SIGKILL in the middle of the drag, and a new
server opens the same database: the stored target must be at least as far along as
every target answered more than ``PROMISE_S`` before the kill (the README's promise for
websocket and viewer changes). Against SQLite and PostgreSQL, a few rounds each.
"""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
from support.servers import ServerProcess
from support.waiting import wait_for
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

PROMISE_S = 0.5  # [s] websocket changes are stored within this
ROUNDS = 3
DRAG_S = 2.5  # [s] of dragging before the kill
STEP_M = 1e-4  # [m] each target is this much further along x than the one before
START_X = 0.3


class Drag:
    """Sends targets at ~30 Hz and records when each ``ref`` was first answered."""

    def __init__(self, stream: ClientConnection) -> None:
        self.stream = stream
        self.answered: dict[int, float] = {}  # ref → when a state first echoed it
        self.sent = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def send_for(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            position = [START_X + STEP_M * self.sent, 0.1, 0.5]
            message = {"type": "target", "task": "ee", "position": position, "ref": self.sent}
            self.stream.send(json.dumps(message))
            self.sent += 1
            time.sleep(1 / 30)

    def _read(self) -> None:
        try:
            while True:
                message = json.loads(self.stream.recv())
                ref = message.get("ref") if message.get("type") == "state" else None
                if isinstance(ref, int) and ref not in self.answered:
                    self.answered[ref] = time.monotonic()
        except (ConnectionClosed, OSError, ValueError):
            return


def _stored_index(server: ServerProcess, session_id: str) -> int:
    """Which drag target the restarted server has for the session (once it serves it)."""
    client = httpx.Client(base_url=server.url, timeout=30)

    def served() -> httpx.Response | None:
        response = client.get(f"/api/sessions/{session_id}/tasks/ee")
        return None if response.status_code == 503 else response  # a lease not expired yet

    response = wait_for(served, timeout=30, what=f"session {session_id} served", poll=0.2)
    assert response.status_code == 200, response.text
    x = response.json()["target"]["position"][0]
    return round((x - START_X) / STEP_M)


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_targets_answered_before_the_promise_survive_kill_9(
    store: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    late: list[float] = []
    for _ in range(ROUNDS):
        database = (
            str(tmp_path_factory.mktemp("db") / "posekit.sqlite3")
            if store == "sqlite"
            else str(request.getfixturevalue("postgres_url"))
        )
        server = ServerProcess(POSEKIT_DB=database, POSEKIT_LEASE_TTL_S="1")
        try:
            client = httpx.Client(base_url=server.url, timeout=30)
            session_id = client.post("/api/sessions", json={"robot": "arm7"}).json()["id"]
            with connect(server.ws_url(session_id), open_timeout=10) as stream:
                drag = Drag(stream)
                drag.send_for(DRAG_S)
                killed_at = time.monotonic()
                server.stop(kill=True)
        finally:
            server.stop(kill=True)
        promised = [ref for ref, at in drag.answered.items() if at < killed_at - PROMISE_S]
        assert promised, "no target was answered early enough to be promised"
        restarted = ServerProcess(POSEKIT_DB=database, POSEKIT_LEASE_TTL_S="1")
        try:
            stored = _stored_index(restarted, session_id)
        finally:
            restarted.stop()
        assert stored <= drag.sent  # a target that was sent
        lost = [ref for ref in promised if ref > stored]
        late += [killed_at - drag.answered[ref] for ref in lost]
    assert not late, f"targets answered {max(late):.2f} s before the kill were lost"
