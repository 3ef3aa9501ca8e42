"""``?format=binary``: states as compact binary frames, equal to the JSON ones."""

from __future__ import annotations

import json
import math

import pytest
from posekit.sessions.live import state_frame
from posekit.sessions.live.state import SessionState
from support.servers import LiveServer
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect


def frame_of(**overrides: object) -> bytes:
    fields: dict[str, object] = {
        "seq": 7,
        "revision": 3,
        "time": 1795390000.25,
        "solve_us": 96.5,
        "rate_hz": 60.0,
        "status": "failed",
        "converged": False,
        "throttled": True,
        "q": [0.1, -0.2, 1e-300, 3.0],
        "errors": [0.5, None],
        "ref": {"drag": "é"},
        "error": "QP solver daqp failed — infeasible",
    }
    fields.update(overrides)
    return state_frame.encode(**fields)  # type: ignore[arg-type]


def test_a_frame_decodes_to_the_fields_it_was_encoded_from() -> None:
    decoded = state_frame.decode(frame_of(), ["ee", "posture"])
    assert decoded["q"] == [0.1, -0.2, 1e-300, 3.0]  # float64: exact
    assert decoded["errors"] == {"ee": 0.5, "posture": None}
    assert decoded["ref"] == {"drag": "é"} and decoded["error"].endswith("infeasible")
    assert decoded["status"] == "failed" and decoded["throttled"] and not decoded["converged"]
    assert (decoded["seq"], decoded["revision"], decoded["solve_us"]) == (7, 3, 96.5)
    bare = state_frame.decode(frame_of(ref=None, error=None, status="running"))
    assert bare["ref"] is None and bare["error"] is None and bare["status"] == "running"
    ref, error = '{"drag":"é"}'.encode(), "QP solver daqp failed — infeasible".encode()
    assert len(frame_of()) == 48 + 8 * (4 + 2) + len(ref) + len(error)
    with pytest.raises(ValueError, match="magic"):
        state_frame.decode(b"JSON" + frame_of()[4:])


def test_a_state_encodes_to_the_frame_of_its_fields() -> None:
    state = SessionState(5, 1.5, [0.0, 1.0], {"a": 0.25, "b": None}, True, "converged", None, 3.0)
    decoded = state_frame.decode(state.binary(), list(state.errors))
    message = json.loads(state.json())
    del message["limits"]  # JSON states only: the binary layout has no field for them
    assert decoded == {**message, "rate_hz": decoded["rate_hz"]}
    assert state.binary() is state.binary()  # encoded once


def states(ws: ClientConnection, count: int) -> list[str | bytes]:
    frames: list[str | bytes] = []
    while len(frames) < count:
        frame = ws.recv(timeout=10)
        if isinstance(frame, bytes) or json.loads(frame)["type"] == "state":
            frames.append(frame)
    return frames


def test_binary_and_json_watchers_get_the_same_states(server: LiveServer, arm: str) -> None:
    with (
        connect(server.ws_url(arm) + "?format=binary") as binary,
        connect(server.ws_url(arm)) as text,
    ):
        hello = json.loads(binary.recv(timeout=10))
        json.loads(text.recv(timeout=10))
        names = [task["name"] for task in hello["tasks"]]
        for i in range(3):
            message = {"type": "target", "task": "ee", "position": [0.4, 0.05 * i, 0.3], "ref": i}
            text.send(json.dumps(message))
        frames = [state_frame.decode(f, names) for f in states(binary, 6)]  # type: ignore[arg-type]
        by_seq = {m["seq"]: m for m in map(json.loads, states(text, 6))}  # type: ignore[arg-type]
    assert all(isinstance(f["q"], list) and len(f["q"]) == 7 for f in frames)
    common = [f for f in frames if f["seq"] in by_seq]
    assert common, "the two watchers never saw the same state"
    for frame in common:
        expected = by_seq[frame["seq"]]
        assert frame["q"] == expected["q"]  # bit for bit: float64 both ways
        for name in names:
            got, want = frame["errors"][name], expected["errors"][name]
            assert (got is None and want is None) or math.isclose(got, want, rel_tol=1e-15)
        assert (frame["ref"], frame["revision"], frame["status"]) == (
            expected["ref"],
            expected["revision"],
            expected["status"],
        )


def test_an_unknown_format_is_refused(server: LiveServer, arm: str) -> None:
    with connect(server.ws_url(arm) + "?format=xml") as ws:
        error = json.loads(ws.recv(timeout=10))
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=10)
    assert error["code"] == "invalid" and "xml" in error["message"]
    assert ws.close_code == 4400
