"""Three replicas behind nginx: every session created through the proxy is owned by
exactly one replica, and the proxy brings every request naming it to that owner."""

from __future__ import annotations

import httpx
from support.cluster import Cluster, metric, served_by, viewer_frame
from websockets.sync.client import connect

SESSIONS = 6


def _create(cluster: Cluster, count: int) -> list[str]:
    with cluster.client() as client:
        return [
            client.post("/api/sessions", json={"robot": "arm7"}).raise_for_status().json()["id"]
            for _ in range(count)
        ]


def test_each_session_has_exactly_one_owner(cluster: Cluster) -> None:
    sessions = _create(cluster, SESSIONS)
    owners: dict[str, str] = {}
    for sid in sessions:
        answers = {
            replica.replica_id: httpx.get(
                f"{replica.url}/api/sessions/{sid}", headers=cluster.headers, timeout=10
            )
            for replica in cluster.replicas
        }
        serving = [rid for rid, answer in answers.items() if answer.status_code == 200]
        assert len(serving) == 1, {rid: a.status_code for rid, a in answers.items()}
        owners[sid] = serving[0]
        for rid, answer in answers.items():
            if rid != owners[sid]:
                assert answer.status_code == 503 and answer.json()["code"] == "not_owner"
                assert answer.headers["retry-after"] == "1"
                assert answer.headers["x-posekit-owner"] == owners[sid]
    for replica in cluster.replicas:
        health = httpx.get(f"{replica.url}/api/health", timeout=10).json()
        assert health["replica"] == replica.replica_id and health["database"]
        text = httpx.get(f"{replica.url}/api/metrics", headers=cluster.headers, timeout=10).text
        owned = sum(1 for owner in owners.values() if owner == replica.replica_id)
        assert metric(text, "posekit_sessions_owned") == owned


def test_requests_through_the_proxy_reach_the_owner(cluster: Cluster) -> None:
    sessions = _create(cluster, SESSIONS)
    with cluster.client() as client:
        listed = {s["id"] for s in client.get("/api/sessions").raise_for_status().json()}
        assert set(sessions) <= listed  # any replica lists the whole cluster's sessions
        for index, sid in enumerate(sessions):
            owner = cluster.owner(sid)
            assert owner is not None
            cost = 1.5 + index
            patched = client.patch(f"/api/sessions/{sid}/tasks/ee", json={"position_cost": cost})
            assert patched.status_code == 200, patched.text
            assert served_by(patched) == owner.address  # retried past not_owner answers
            ee = client.get(f"/api/sessions/{sid}/tasks/ee").raise_for_status()
            assert ee.json()["params"]["position_cost"] == cost
            assert served_by(ee) == owner.address
        deleted = client.delete(f"/api/sessions/{sessions[0]}")
        assert deleted.status_code in (200, 204)
        assert client.get(f"/api/sessions/{sessions[0]}").status_code == 404


def test_websockets_viewer_and_the_token_cookie_pass_through(cluster: Cluster) -> None:
    (sid,) = _create(cluster, 1)
    with connect(
        cluster.ws_url(f"/api/sessions/{sid}/stream"),
        additional_headers=cluster.headers,
        open_timeout=10,
    ) as websocket:
        assert '"hello"' in websocket.recv(timeout=10)
    assert viewer_frame(cluster, sid)  # the viewer's socket, relayed by the owner
    token = cluster.token
    link = httpx.get(f"{cluster.url}/viewer/{sid}?token={token}", timeout=30)
    assert link.status_code == 307 and "posekit_token" in link.headers["set-cookie"]
    page = httpx.get(f"{cluster.url}/viewer/{sid}", cookies={"posekit_token": token}, timeout=30)
    assert page.status_code == 200 and "<html" in page.text.lower()
    assert httpx.get(f"{cluster.url}/api/sessions/{sid}", timeout=30).status_code == 401
