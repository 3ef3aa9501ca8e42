"""Capacity limits: sessions, tasks per session, body and websocket message size,
websocket message rate, and idle sessions unloaded then revived."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from posekit.api.errors import status_of
from posekit.api.token_bucket import TokenBucket
from posekit.robots import RobotLoadError, RobotRegistry
from posekit.sessions.errors import (
    CollisionPairsCapReached,
    LimitCapReached,
    SessionLimitReached,
    TaskLimitReached,
)
from posekit.sessions.manager import SessionManager
from posekit.sessions.store.protocol import MemoryStore
from support.servers import ServerProcess
from support.waiting import wait_for
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect


# ------------------------------------------------------------ without a server
def test_token_bucket_admits_a_burst_then_the_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr("posekit.api.token_bucket.time.monotonic", lambda: clock[0])
    gate = TokenBucket(4.0)
    assert [gate.admit() for _ in range(6)] == [True] * 4 + [False] * 2
    assert gate.delay() == pytest.approx(0.25)
    assert gate.delay(need=0.0) == 0.0  # an urgent event borrows ahead
    clock[0] += 0.5  # two tokens back
    assert [gate.admit() for _ in range(3)] == [True, True, False]
    clock[0] += 100.0  # refills to the burst, not beyond
    assert sum(gate.admit() for _ in range(10)) == 4
    unlimited = TokenBucket(0.0)
    assert all(unlimited.admit() for _ in range(1000))


HANDS_AND_LEGS = [
    [["left_hand", "right_hand"], ["left_thigh", "right_thigh", "left_shin", "right_shin"]]
]  # 8 pairs
HANDS = [[["left_hand"], ["right_hand"]]]  # 1 pair


def test_limit_and_collision_pair_caps_refuse_and_change_nothing() -> None:
    """One client cannot make its session check unbounded limits or geom pairs."""
    with SessionManager(max_limits=3, max_collision_pairs=8) as manager:
        session = manager.create({"robot": "humanoid", "preset": False})  # + configuration
        session.add_limit({"type": "collision_avoidance", "params": {"geom_pairs": HANDS_AND_LEGS}})
        before = session.spec()
        with pytest.raises(CollisionPairsCapReached, match="at most 8 collision pairs"):
            session.add_limit({"type": "collision_avoidance", "params": {"geom_pairs": HANDS}})
        assert session.spec().limits == before.limits
        name = before.limits[-1].name
        session.patch_limit(name, {"geom_pairs": HANDS})  # 1 pair now: room for 7 more
        session.add_limit({"type": "collision_avoidance", "params": {"geom_pairs": HANDS}})
        before = session.spec()
        with pytest.raises(LimitCapReached, match="at most 3 limits"):
            session.add_limit({"type": "velocity", "params": {"velocities": {"waist": 1.0}}})
        assert session.spec().limits == before.limits
        too_many = before.model_dump(mode="json")
        too_many["limits"].append({"type": "velocity", "params": {"velocities": {"waist": 1.0}}})
        with pytest.raises(LimitCapReached):
            session.replace_spec(too_many)
        assert session.spec().limits == before.limits
    assert status_of(CollisionPairsCapReached(9, 8)) == (409, "too_many_collision_pairs")
    assert status_of(LimitCapReached(4, 3)) == (409, "too_many_limits")


def _arm_spec(manager: SessionManager) -> dict:
    session = manager.create({"robot": "arm7"})
    spec = session.spec().model_dump(mode="json")
    manager.delete(session.id)
    return spec


def test_task_limit_refuses_and_changes_nothing() -> None:
    with SessionManager(max_tasks=3) as manager:
        session = manager.create({"robot": "arm7"})  # preset: ee + posture
        session.add_task({"type": "damping", "params": {"cost": 0.1}})
        before = session.spec()
        with pytest.raises(TaskLimitReached, match="at most 3 tasks"):
            session.add_task({"type": "com"})
        assert session.spec().tasks == before.tasks
        too_many = dict(before.model_dump(mode="json"))
        too_many["tasks"] = [*too_many["tasks"], {"name": "extra", "type": "damping"}]
        with pytest.raises(TaskLimitReached):
            session.replace_spec(too_many)
        assert session.spec().tasks == before.tasks
        with pytest.raises(TaskLimitReached):
            manager.create({"spec": too_many})
        assert manager.count() == 1


def test_idle_session_unloads_and_revives_in_the_same_state() -> None:
    store = MemoryStore()
    closed: list[str] = []
    with SessionManager(store=store, idle_unload_s=60.0, flush_interval=3600.0) as manager:
        manager.on_session_closed(closed.append)
        idle = manager.create({"robot": "arm7"})
        busy = manager.create({"robot": "arm7"})
        idle.patch_task("ee", {"position_cost": 2.5, "target": {"position": [0.4, 0.1, 0.3]}})
        idle.set_solver({"paused": True})
        spec = idle.spec().model_dump(mode="json")
        idle.last_used -= 120.0  # as if nobody had used it for two minutes
        busy.last_used -= 120.0
        loop = asyncio.new_event_loop()  # the watcher's loop; never run here
        watching = busy.subscribe(loop=loop)  # a watcher keeps a session loaded
        assert manager.unload_idle() == [idle.id]
        assert idle.closed and not busy.closed and closed == [idle.id]
        assert [s.id for s in manager.sessions()] == [busy.id]
        [unloaded] = manager.unloaded()
        assert unloaded.summary.id == idle.id and unloaded.summary.status == "unloaded"
        assert store.specs[idle.id] == spec  # kept in storage too
        revived = manager.get(idle.id)
        assert revived is not idle and revived.id == idle.id and not manager.unloaded()
        assert revived.spec().model_dump(mode="json") == spec
        assert revived.created == idle.created
        watching.close()
        loop.close()
        manager.delete(busy.id)


def test_reviving_respects_the_session_limit_and_keeps_the_session() -> None:
    with SessionManager(max_sessions=1, idle_unload_s=60.0) as manager:
        first = manager.create({"robot": "arm7"})
        first.last_used -= 120.0
        manager.unload_idle()
        other = manager.create({"robot": "arm7"})
        with pytest.raises(SessionLimitReached):
            manager.get(first.id)
        assert [u.summary.id for u in manager.unloaded()] == [first.id]
        manager.delete(other.id)
        assert manager.get(first.id).id == first.id


def test_deleting_an_unloaded_session_forgets_it() -> None:
    store = MemoryStore()
    with SessionManager(store=store, idle_unload_s=60.0) as manager:
        session = manager.create({"robot": "arm7"})
        session.last_used -= 120.0
        manager.unload_idle()
        manager.delete(session.id)
        assert not manager.unloaded() and session.id not in store.specs
        with pytest.raises(Exception, match="does not exist"):
            manager.get(session.id)


def test_stored_sessions_are_capped_without_dropping_any() -> None:
    store = MemoryStore()
    with SessionManager(store=store, max_stored_sessions=2, idle_unload_s=60.0) as manager:
        first = manager.create({"robot": "arm7"})
        first.last_used -= 120.0
        manager.unload_idle()  # unloaded sessions count: they are kept
        second = manager.create({"robot": "arm7"})
        with pytest.raises(SessionLimitReached, match="keeps 2 sessions, 1 of them unloaded"):
            manager.create({"robot": "arm7"})
        assert set(store.specs) == {first.id, second.id}
        assert manager.get(first.id).id == first.id  # reviving is not creating
        manager.delete(second.id)
        manager.create({"robot": "arm7"})


def test_a_stored_session_whose_robot_cannot_load_is_kept_and_restored_later(
    tmp_path: Path,
) -> None:
    """A robot that is momentarily unavailable never costs a stored session: it is listed
    as unavailable with the reason, stays in the store, and comes back when it can."""
    good = (Path(__file__).parents[2] / "models" / "arm7.xml").read_text()
    (tmp_path / "bench_arm.xml").write_text(good)
    store = MemoryStore()
    with SessionManager(RobotRegistry(tmp_path, menagerie=False), store) as manager:
        session = manager.create({"robot": "bench_arm"})
        session.set_q(keyframe="home")
        spec = session.spec().model_dump(mode="json")
    (tmp_path / "bench_arm.xml").write_text("<mujoco><worldbody><body>")  # broken for now
    with SessionManager(RobotRegistry(tmp_path, menagerie=False), store) as manager:
        [kept] = manager.unloaded()
        assert kept.summary.id == session.id and kept.summary.status == "unavailable"
        assert "bench_arm" in (kept.summary.error or "")
        with pytest.raises(RobotLoadError):
            manager.get(session.id)  # every request tries again
        assert store.specs[session.id] == spec
        (tmp_path / "bench_arm.xml").write_text(good)
        manager.retry_unavailable()
        assert not manager.unloaded()
        assert manager.get(session.id).spec().model_dump(mode="json")["q"] == spec["q"]


def test_session_ids_are_unguessable() -> None:
    with SessionManager() as manager:
        ids = {manager.create({"robot": "arm7", "preset": False}).id for _ in range(5)}
        assert len(ids) == 5
        assert all(len(i) >= 16 for i in ids)  # 96 random bits, URL-safe base64


# --------------------------------------------------------- against posekit up
@pytest.fixture(scope="module")
def limited() -> Iterator[ServerProcess]:
    server = ServerProcess(
        POSEKIT_MAX_SESSIONS="2",
        POSEKIT_MAX_TASKS="3",
        POSEKIT_MAX_BODY_BYTES="4096",
        POSEKIT_WS_MAX_BYTES="1024",
        POSEKIT_WS_RATE="5",
        POSEKIT_IDLE_UNLOAD_S="0",
    )
    yield server
    server.stop()


def _metric(server: ServerProcess, line_start: str) -> float:
    text = httpx.get(server.url + "/api/metrics", timeout=10).text
    return float(next(line for line in text.splitlines() if line.startswith(line_start)).split()[1])


def test_each_limit_is_enforced_with_its_status(limited: ServerProcess) -> None:
    client = httpx.Client(base_url=limited.url, timeout=30)
    first = client.post("/api/sessions", json={"robot": "arm7"}).json()["id"]
    second = client.post("/api/sessions", json={"robot": "arm7"}).json()["id"]
    try:
        third = client.post("/api/sessions", json={"robot": "arm7"})
        assert third.status_code == 429 and "maximum is 2" in third.json()["detail"]
        assert len(client.get("/api/sessions").json()) == 2

        damping = {"type": "damping", "params": {"cost": 0.1}}
        assert client.post(f"/api/sessions/{first}/tasks", json=damping).status_code == 201
        full = client.post(f"/api/sessions/{first}/tasks", json={"type": "com"})
        assert full.status_code == 409 and full.json()["code"] == "too_many_tasks"
        assert "at most 3 tasks" in full.json()["detail"]
        assert [t["name"] for t in client.get(f"/api/sessions/{first}/tasks").json()] == [
            "ee",
            "posture",
            "damping",
        ]

        big = {"robot": "arm7", "keyframe": "x" * 5000}
        assert client.post("/api/sessions", json=big).status_code == 413
    finally:
        client.delete(f"/api/sessions/{first}")
        client.delete(f"/api/sessions/{second}")


def test_websocket_message_size_and_rate(limited: ServerProcess) -> None:
    client = httpx.Client(base_url=limited.url, timeout=30)
    sid = client.post("/api/sessions", json={"robot": "arm7"}).json()["id"]
    try:
        target = client.get(f"/api/sessions/{sid}/tasks/ee").json()["target"]
        with connect(limited.ws_url(sid), open_timeout=10) as ws:
            assert json.loads(ws.recv(timeout=10))["type"] == "hello"
            oversized = {"type": "target", "task": "ee", "position": [0.4, 0.0, 0.3]}
            ws.send(json.dumps({**oversized, "ref": "x" * 100, "pad": " " * 2000}))
            error = _next_of(ws, "error")
            assert error["code"] == "too_large" and "limit of 1024 bytes" in error["message"]
            assert client.get(f"/api/sessions/{sid}/tasks/ee").json()["target"] == target

            time.sleep(1.2)  # the size refusal used a token; let the bucket refill
            for index in range(20):  # a burst far above 5 messages per second
                ws.send(json.dumps({"type": "ping", "ref": index}))
            pongs, limited_refs = _collect(ws, seconds=0.8)
            assert limited_refs, "no message was refused for its rate"
            assert 1 <= len(pongs) <= 7  # the burst (5) plus what refilled while sending
            assert set(pongs).isdisjoint(limited_refs)
            time.sleep(1.2)
            ws.send(json.dumps({"type": "ping", "ref": "after"}))
            assert _next_of(ws, "pong")["ref"] == "after"  # served again at the rate
        assert _metric(limited, 'posekit_websocket_refused_total{code="rate_limited"}') >= 1
        assert _metric(limited, 'posekit_websocket_refused_total{code="too_large"}') == 1
    finally:
        client.delete(f"/api/sessions/{sid}")


def test_a_flooding_client_is_cut_off_and_the_session_stays(limited: ServerProcess) -> None:
    """A client sending far beyond its rate (here 5 a second) is told why (``error``
    ``flooding``, naming the limit), is no longer read (a ping goes unanswered) and is
    dropped; the session is as it was, and a new stream is served."""
    client = httpx.Client(base_url=limited.url, timeout=30)
    sid = client.post("/api/sessions", json={"robot": "arm7"}).json()["id"]
    try:
        target = client.get(f"/api/sessions/{sid}/tasks/ee").json()["target"]
        with connect(limited.ws_url(sid), open_timeout=10) as ws:
            assert json.loads(ws.recv(timeout=10))["type"] == "hello"
            moved = {"type": "target", "task": "ee", "position": [0.3, 0.3, 0.3]}
            for index in range(2000):
                ws.send(json.dumps({**moved, "ref": index}))
            told = _next_of(ws, "error", code="flooding")
            assert "limit of 5" in told["message"]
            ws.send(json.dumps({"type": "ping", "ref": "still there?"}))
            with pytest.raises(TimeoutError):
                _next_of(ws, "pong", seconds=2)  # not read any more
            with pytest.raises(ConnectionClosed):
                while True:
                    ws.recv(timeout=30)  # dropped after its hold
        answered = client.get(f"/api/sessions/{sid}/tasks/ee").json()["target"]
        assert answered["position"] in (target["position"], moved["position"])
        with connect(limited.ws_url(sid), open_timeout=10) as ws:
            assert json.loads(ws.recv(timeout=10))["type"] == "hello"
        assert _metric(limited, 'posekit_websocket_refused_total{code="flooding"}') == 1
    finally:
        client.delete(f"/api/sessions/{sid}")


def _next_of(ws, kind: str, code: str | None = None, seconds: float = 10) -> dict:
    """The next message of ``kind`` (and ``code``) within ``seconds`` (TimeoutError)."""
    deadline = time.monotonic() + seconds
    while (remaining := deadline - time.monotonic()) > 0:
        message = json.loads(ws.recv(timeout=remaining))
        if message["type"] == kind and code in (None, message.get("code")):
            return message
    raise TimeoutError(f"no {kind} message")


def test_clients_of_one_token_share_its_budget() -> None:
    """Two streams of one token, each far under its own budget (100 a second), send 15
    pings each at once: the token's budget (10 a second, bursts of 10) refuses what is
    over it, saying it is the token's, and answers the rest."""
    server = ServerProcess(
        POSEKIT_TOKEN="s3cret", POSEKIT_WS_RATE="100", POSEKIT_WS_TOKEN_RATE="10"
    )
    headers = {"Authorization": "Bearer s3cret"}
    client = httpx.Client(base_url=server.url, timeout=30, headers=headers)
    try:
        sid = client.post("/api/sessions", json={"robot": "arm7"}).json()["id"]
        url = server.ws_url(sid) + "?token=s3cret"
        with connect(url, open_timeout=10) as one, connect(url, open_timeout=10) as two:
            for ws in (one, two):
                assert json.loads(ws.recv(timeout=10))["type"] == "hello"
            for index in range(15):
                one.send(json.dumps({"type": "ping", "ref": f"one-{index}"}))
                two.send(json.dumps({"type": "ping", "ref": f"two-{index}"}))
            answered, refused, texts = [], [], []
            for ws in (one, two):
                pongs, limited_refs = _collect(ws, seconds=0.8, texts=texts)
                answered += pongs
                refused += limited_refs
        assert len(answered) + len(refused) == 30
        assert len(refused) >= 5 and 10 <= len(answered) <= 25, (answered, refused)
        assert all("all clients of this access token" in text for text in texts), texts
    finally:
        server.stop()


def _collect(ws, seconds: float, texts: list | None = None) -> tuple[list, list]:
    pongs, refused = [], []
    deadline = time.monotonic() + seconds
    while (remaining := deadline - time.monotonic()) > 0:
        try:
            message = json.loads(ws.recv(timeout=remaining))
        except TimeoutError:
            break
        if message["type"] == "pong":
            pongs.append(message["ref"])
        elif message["type"] == "error" and message["code"] == "rate_limited":
            refused.append(message["ref"])
            if texts is not None:
                texts.append(message["message"])
    return pongs, refused


def test_idle_sessions_unload_and_revive_across_a_restart(tmp_path: Path) -> None:
    database = str(tmp_path / "posekit.sqlite3")
    server = ServerProcess(robot="arm7", POSEKIT_DB=database, POSEKIT_IDLE_UNLOAD_S="1")
    client = httpx.Client(base_url=server.url, timeout=30)
    try:
        [first] = client.get("/api/sessions").json()  # posekit up made the first session
        sid = first["id"]
        client.patch(
            f"/api/sessions/{sid}/tasks/ee", json={"target": {"position": [0.45, 0.1, 0.3]}}
        ).raise_for_status()
        client.patch(f"/api/sessions/{sid}/solver", json={"paused": True}).raise_for_status()
        wait_for(  # the state answering the pause: every step solved before it has arrived
            lambda: client.get(f"/api/sessions/{sid}").json()["status"] == "paused",
            what="the paused state",
        )
        spec = client.get(f"/api/sessions/{sid}/spec").json()
        deadline = time.monotonic() + 20
        while client.get("/api/sessions").json()[0]["status"] != "unloaded":
            assert time.monotonic() < deadline, "the idle session was never unloaded"
            time.sleep(0.3)
        assert _metric(server, "posekit_sessions ") == 0
        assert _metric(server, "posekit_sessions_unloaded ") == 1
        assert client.get(f"/api/sessions/{sid}/spec").json() == spec  # revived on request
        assert client.get(f"/api/sessions/{sid}").json()["status"] == "paused"
        with connect(server.ws_url(sid), open_timeout=10) as ws:  # a watcher keeps it loaded
            assert json.loads(ws.recv(timeout=10))["type"] == "hello"
            time.sleep(2.5)
            assert client.get("/api/sessions").json()[0]["status"] == "paused"
    finally:
        server.stop()
    restarted = ServerProcess(robot="arm7", POSEKIT_DB=database, POSEKIT_IDLE_UNLOAD_S="0")
    try:  # the stored session comes back, and no second first session is made
        sessions = httpx.get(restarted.url + "/api/sessions", timeout=30).json()
        assert [s["id"] for s in sessions] == [sid]
        restored = httpx.get(f"{restarted.url}/api/sessions/{sid}/spec", timeout=30).json()
        assert restored == spec
    finally:
        restarted.stop()
