"""Deployment features against real server processes: persistence across restarts and
SIGKILL, the access token on REST, websocket and viewer, and the metrics endpoint."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.servers import ServerProcess
from support.waiting import wait_for
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect


@pytest.fixture
def database(tmp_path: Path) -> Iterator[str]:
    yield str(tmp_path / "posekit.sqlite3")


def test_sessions_survive_a_restart(database: str) -> None:
    server = ServerProcess(POSEKIT_DB=database)
    client = httpx.Client(base_url=server.url, timeout=30)
    first = client.post("/api/sessions", json={"robot": "arm7"}).json()["id"]
    second = client.post("/api/sessions", json={"robot": "humanoid"}).json()["id"]
    client.patch(
        f"/api/sessions/{first}/tasks/ee",
        json={"position_cost": 2.5, "target": {"position": [0.45, 0.1, 0.35]}},
    ).raise_for_status()
    wait_for(  # parked: q no longer moves
        lambda: all(
            client.get(f"/api/sessions/{sid}").json()["status"] == "converged"
            for sid in (first, second)
        ),
        what="both sessions converged",
    )
    specs = {sid: client.get(f"/api/sessions/{sid}/spec").json() for sid in (first, second)}
    server.stop()
    restarted = ServerProcess(POSEKIT_DB=database)
    client = httpx.Client(base_url=restarted.url, timeout=30)
    try:
        assert {s["id"] for s in client.get("/api/sessions").json()} == {first, second}
        for sid, spec in specs.items():
            restored = client.get(f"/api/sessions/{sid}/spec").json()
            assert restored["tasks"] == spec["tasks"] and restored["limits"] == spec["limits"]
            assert restored["q"] == pytest.approx(spec["q"], abs=1e-9)
    finally:
        restarted.stop()


def test_acknowledged_changes_survive_sigkill(database: str) -> None:
    server = ServerProcess(POSEKIT_DB=database)
    client = httpx.Client(base_url=server.url, timeout=30)
    sid = client.post("/api/sessions", json={"robot": "arm7"}).json()["id"]
    acknowledged = None
    for index in range(40):  # a burst of acknowledged changes, then kill -9 at once
        cost = 1.0 + index / 10.0
        if (
            client.patch(f"/api/sessions/{sid}/tasks/ee", json={"position_cost": cost}).status_code
            == 200
        ):
            acknowledged = cost
    server.stop(kill=True)
    restarted = ServerProcess(POSEKIT_DB=database)
    try:
        ee = httpx.get(f"{restarted.url}/api/sessions/{sid}/tasks/ee", timeout=30).json()
        assert ee["params"]["position_cost"] == acknowledged
    finally:
        restarted.stop()


def test_the_token_guards_rest_websocket_and_viewer() -> None:
    server = ServerProcess(POSEKIT_TOKEN="s3cret")
    try:
        assert httpx.get(server.url + "/api/health").status_code == 200  # health checks stay open
        assert httpx.get(server.url + "/api/sessions").status_code == 401
        assert httpx.get(server.url + "/").status_code == 401
        auth = {"Authorization": "Bearer s3cret"}
        sid = httpx.post(server.url + "/api/sessions", json={"robot": "arm7"}, headers=auth).json()[
            "id"
        ]
        assert httpx.get(f"{server.url}/viewer/{sid}").status_code == 401
        link = httpx.get(f"{server.url}/viewer/{sid}?token=s3cret")
        assert link.status_code == 307 and link.headers["location"] == f"/viewer/{sid}"
        assert "posekit_token" in link.headers["set-cookie"]
        with httpx.Client(base_url=server.url, follow_redirects=True) as browser:
            page = browser.get(f"/viewer/{sid}?token=s3cret")  # the cookie carries it on
            assert page.status_code == 200 and page.url.query == b""
        assert (
            httpx.get(f"{server.url}/viewer/{sid}", cookies={"posekit_token": "s3cret"}).status_code
            == 200
        )
        stream = f"ws://127.0.0.1:{server.port}/api/sessions/{sid}/stream"
        with pytest.raises(InvalidStatus):
            connect(stream).close()
        with connect(stream, additional_headers=auth) as websocket:
            assert '"hello"' in websocket.recv(timeout=10)
    finally:
        server.stop()


def test_metrics_in_prometheus_format() -> None:
    server = ServerProcess()
    try:
        httpx.post(server.url + "/api/sessions", json={"robot": "arm7"})
        httpx.get(server.url + "/api/sessions/nope")

        def metrics_after_a_step() -> httpx.Response | None:
            response = httpx.get(server.url + "/api/metrics")
            steps = next(
                line
                for line in response.text.splitlines()
                if line.startswith("posekit_steps_total")
            )
            return response if float(steps.split()[1]) > 0 else None

        response = wait_for(metrics_after_a_step, what="a solve step in the metrics")
        assert response.headers["content-type"].startswith("text/plain")
        text = response.text
        assert "posekit_sessions 1.0" in text
        assert 'posekit_rejected_requests_total{status="404"} 1' in text
        assert "posekit_solve_time_us_bucket" in text
        assert response.headers.get("x-request-id")
    finally:
        server.stop()
