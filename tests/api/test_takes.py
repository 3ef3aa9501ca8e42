"""Takes over REST: record a drag, download and upload it, replay and compare weight sets."""

from __future__ import annotations

import io
import json
import time
from xml.etree import ElementTree

import httpx
import numpy as np
import pytest
from support.servers import LiveServer
from support.waiting import wait_for
from websockets.sync.client import connect


def record_drag(client: httpx.Client, server: LiveServer, session: str, moves: int = 30) -> dict:
    """A take of ``moves`` targets sent over the stream (20 Hz) and one weight change."""
    started = client.post(f"/api/sessions/{session}/takes", json={"name": "circle"})
    assert started.status_code == 201, started.text
    assert started.json()["recording"] is True
    with connect(server.ws_url(session), open_timeout=10) as stream:
        for k in range(moves):
            angle = 2 * np.pi * k / moves
            position = [0.45 + 0.1 * np.cos(angle), 0.1 * np.sin(angle), 0.45]
            stream.send(json.dumps({"type": "target", "task": "ee", "position": position}))
            if k == moves // 2:
                patched = client.patch(
                    f"/api/sessions/{session}/tasks/ee", json={"position_cost": 2.0}
                )
                assert patched.status_code == 200
            time.sleep(0.05)
    stopped = client.post(f"/api/sessions/{session}/takes/{started.json()['id']}/stop")
    assert stopped.status_code == 200, stopped.text
    return stopped.json()


def test_a_drag_is_recorded_and_replays_the_same_twice(
    client: httpx.Client, server: LiveServer, arm: str
) -> None:
    info = record_drag(client, server, arm)
    assert info["events"] == 31 and info["steps"] > 0 and info["name"] == "circle"
    listed = client.get(f"/api/sessions/{arm}/takes").json()
    assert [t["id"] for t in listed] == [info["id"]]
    first = client.post(f"/api/sessions/{arm}/takes/{info['id']}/replay").json()
    second = client.post(f"/api/sessions/{arm}/takes/{info['id']}/replay").json()
    assert first["q"] == second["q"] and first["errors"] == second["errors"]
    assert len(first["q"]) == info["steps"] == first["summary"]["steps"]
    assert set(first["errors"]) == {"ee", "posture"}


def test_compare_gives_the_replay_figures_of_each_weight_set(
    client: httpx.Client, server: LiveServer, arm: str
) -> None:
    take = record_drag(client, server, arm)["id"]
    soft = {"label": "soft", "tasks": {"ee": {"orientation_cost": 0.01}}}
    stiff = {"label": "stiff posture", "tasks": {"posture": {"cost": 5.0}}}
    compared = client.post(
        f"/api/sessions/{arm}/takes/{take}/compare", json={"variants": [soft, stiff]}
    )
    assert compared.status_code == 200, compared.text
    figures = compared.json()
    assert [f["label"] for f in figures] == ["soft", "stiff posture"]
    replayed = client.post(f"/api/sessions/{arm}/takes/{take}/replay", json=soft).json()["summary"]
    assert figures[0]["tasks"] == replayed["tasks"]
    assert figures[1]["tasks"]["ee"]["rms"] > figures[0]["tasks"]["ee"]["rms"]  # posture fights
    bad = client.post(
        f"/api/sessions/{arm}/takes/{take}/compare",
        json={"variants": [{"tasks": {"nope": {"cost": 1.0}}}]},
    )
    assert bad.status_code == 404 and "nope" in bad.json()["detail"]


def test_a_replay_exports_as_csv_and_npz(
    client: httpx.Client, server: LiveServer, arm: str
) -> None:
    take = record_drag(client, server, arm, moves=10)
    url = f"/api/sessions/{arm}/takes/{take['id']}/replay"
    rows = client.post(url, params={"format": "csv"}).text.strip().splitlines()
    assert rows[0].startswith("step,t,status,q_0") and rows[0].endswith("ee,posture")
    assert len(rows) == take["steps"] + 1
    arrays = np.load(io.BytesIO(client.post(url, params={"format": "npz"}).content))
    assert arrays["q"].shape == (take["steps"], 7) and arrays["error_ee"].shape == (take["steps"],)
    keys = ElementTree.fromstring(client.post(url, params={"format": "mjcf", "every": 5}).text)
    assert len(keys) == -(-take["steps"] // 5)  # every fifth step, and the last
    last = keys[-1].attrib
    assert [float(v) for v in last["qpos"].split()] == arrays["q"][-1].tolist()  # exactly
    assert float(last["time"]) == pytest.approx(take["steps"] / 60.0)


def test_a_take_moves_to_another_session_of_its_robot_only(
    client: httpx.Client, server: LiveServer, arm: str
) -> None:
    take = record_drag(client, server, arm, moves=10)
    downloaded = client.get(f"/api/sessions/{arm}/takes/{take['id']}")
    assert "attachment" in downloaded.headers["content-disposition"]
    other = client.post("/api/sessions", json={"robot": "arm7"}).json()["id"]
    humanoid = client.post("/api/sessions", json={"robot": "humanoid"}).json()["id"]
    try:
        json_file = {"content-type": "application/json"}
        uploaded = client.put(
            f"/api/sessions/{other}/takes/{take['id']}",
            content=downloaded.content,
            headers=json_file,
        )
        assert uploaded.status_code == 201, uploaded.text
        mine = client.post(f"/api/sessions/{arm}/takes/{take['id']}/replay").json()["q"]
        theirs = client.post(f"/api/sessions/{other}/takes/{take['id']}/replay").json()["q"]
        assert mine == theirs
        foreign = client.put(
            f"/api/sessions/{humanoid}/takes/{take['id']}",
            content=downloaded.content,
            headers=json_file,
        )
        assert foreign.status_code == 409 and "arm7" in foreign.json()["detail"]
        broken = json.loads(downloaded.content)
        broken["events"][0]["kind"] = "teleport"
        refused = client.put(f"/api/sessions/{other}/takes/broken", json=broken)
        assert refused.status_code == 422
        assert client.get(f"/api/sessions/{humanoid}/takes").json() == []
        assert len(client.get(f"/api/sessions/{other}/takes").json()) == 1
    finally:
        client.delete(f"/api/sessions/{other}")
        client.delete(f"/api/sessions/{humanoid}")


def test_one_take_at_a_time_and_stop_needs_one(client: httpx.Client, arm: str) -> None:
    assert client.post(f"/api/sessions/{arm}/takes/nothing/stop").status_code == 404
    started = client.post(f"/api/sessions/{arm}/takes")
    assert started.status_code == 201
    again = client.post(f"/api/sessions/{arm}/takes")
    assert again.status_code == 409 and "stop it first" in again.json()["detail"]
    wait_for(lambda: client.get(f"/api/sessions/{arm}/takes").json()[0]["recording"], what="listed")
    assert client.post(f"/api/sessions/{arm}/takes/other/stop").status_code == 404
    stopped = client.post(f"/api/sessions/{arm}/takes/{started.json()['id']}/stop").json()
    assert client.delete(f"/api/sessions/{arm}/takes/{stopped['id']}").status_code == 204
    assert client.get(f"/api/sessions/{arm}/takes").json() == []
    assert client.get(f"/api/sessions/{arm}/takes/{stopped['id']}").status_code == 404
