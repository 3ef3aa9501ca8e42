"""Two app instances (replicas ``a`` and ``b``) on one PostgreSQL schema, over HTTP.

The replica that does not own a session answers 503 ``not_owner`` with ``Retry-After``
and ``X-Posekit-Owner`` — for REST, for the stream's websocket upgrade and for the
viewer (page and websocket) — and changes nothing; listings show the whole cluster;
health and metrics name the replica.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from posekit.settings import Settings
from support.servers import LiveServer
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect


@pytest.fixture
def replicas(postgres_url: str) -> Iterator[tuple[LiveServer, LiveServer]]:
    servers = [
        LiveServer(
            settings=Settings.from_env(
                {"POSEKIT_DB": postgres_url, "POSEKIT_REPLICA_ID": name, "POSEKIT_LEASE_TTL_S": "2"}
            )
        ).start()
        for name in ("a", "b")
    ]
    yield servers[0], servers[1]
    for server in servers:
        server.stop()


def _assert_not_owner(response: httpx.Response, owner: str) -> None:
    assert response.status_code == 503, response.text
    assert response.json()["code"] == "not_owner"
    assert response.json()["owner"] == owner
    assert response.headers["retry-after"] == "1"
    assert response.headers["x-posekit-owner"] == owner


def test_the_replica_that_does_not_own_a_session_answers_503_not_owner(
    replicas: tuple[LiveServer, LiveServer],
) -> None:
    a, b = replicas
    created = httpx.post(f"{a.base_url}/api/sessions", json={"robot": "arm7"}, timeout=30)
    assert created.status_code == 201
    sid = created.json()["id"]
    for method, path, body in (
        ("GET", f"/api/sessions/{sid}", None),
        ("GET", f"/api/sessions/{sid}/state", None),
        ("PATCH", f"/api/sessions/{sid}/solver", {"paused": True}),
        ("DELETE", f"/api/sessions/{sid}", None),
        ("GET", f"/viewer/{sid}", None),
    ):
        response = httpx.request(method, b.base_url + path, json=body, timeout=30)
        _assert_not_owner(response, "a")
    assert b.manager.count() == 0
    assert httpx.get(f"{a.base_url}/api/sessions/{sid}/solver").json()["paused"] is False
    for path in (f"/api/sessions/{sid}/stream", f"/viewer/{sid}"):
        with pytest.raises(InvalidStatus) as refused:
            connect(f"ws://127.0.0.1:{b.port}{path}", open_timeout=30)
        assert refused.value.response.status_code == 503
        assert refused.value.response.headers["X-Posekit-Owner"] == "a"
    with connect(a.ws_url(sid), open_timeout=30) as stream:
        assert '"hello"' in str(stream.recv(timeout=30))


def test_listings_show_the_whole_cluster(replicas: tuple[LiveServer, LiveServer]) -> None:
    a, b = replicas
    on_a = httpx.post(f"{a.base_url}/api/sessions", json={"robot": "arm7"}, timeout=30).json()
    on_b = httpx.post(f"{b.base_url}/api/sessions", json={"robot": "arm7"}, timeout=30).json()
    for server in (a, b):
        listed = {s["id"]: s for s in httpx.get(f"{server.base_url}/api/sessions").json()}
        assert listed[on_a["id"]]["owner"] == "a" and listed[on_b["id"]]["owner"] == "b"
        assert all(s["live"] for s in listed.values())
    mine = {s["id"]: s for s in httpx.get(f"{a.base_url}/api/sessions").json()}
    assert mine[on_a["id"]]["status"] != "remote" and mine[on_b["id"]]["status"] == "remote"


def test_health_and_metrics_name_the_replica_and_its_database(
    replicas: tuple[LiveServer, LiveServer],
) -> None:
    a, b = replicas
    httpx.post(f"{a.base_url}/api/sessions", json={"robot": "arm7"}, timeout=30)
    health = httpx.get(f"{b.base_url}/api/health").json()
    assert health["replica"] == "b"
    assert health["database"] == {"kind": "postgresql", "ok": True}
    metrics = httpx.get(f"{a.base_url}/api/metrics").text
    assert 'posekit_sessions_owned{replica="a"} 1.0' in metrics
    assert 'posekit_lease_takeovers_total{replica="a"} 0.0' in metrics
    assert 'posekit_lease_renew_failures_total{replica="a"}' in metrics


def test_a_single_replica_says_so_in_its_health(tmp_path: object) -> None:
    server = LiveServer(
        settings=Settings.from_env(
            {"POSEKIT_DB": f"{tmp_path}/s.sqlite3", "POSEKIT_REPLICA_ID": "solo"}
        )
    ).start()
    try:
        health = httpx.get(f"{server.base_url}/api/health").json()
        assert health["replica"] == "solo"
        assert health["database"] == {"kind": "sqlite", "ok": True}
        metrics = httpx.get(f"{server.base_url}/api/metrics").text
        assert 'posekit_sessions_owned{replica="solo"} 0.0' in metrics
    finally:
        server.stop()
