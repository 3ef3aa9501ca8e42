"""An infeasible hard constraint is reported on the stream and in the session, keeps the
last good q, and the session recovers when the conflict is removed."""

from __future__ import annotations

import httpx
import numpy as np
from support.servers import LiveServer
from support.streams import next_message, open_stream, recv, site_pose


def test_infeasible_constraint_is_reported_and_recovered_from(
    server: LiveServer, client: httpx.Client, arm: str
) -> None:
    joints = {f"joint{i}": 0.05 for i in range(1, 8)}
    ee = client.get(f"/api/sessions/{arm}/tasks/ee").json()["target"]
    goal = np.add(ee["position"], [0.0, 0.2, 0.0]).tolist()
    with open_stream(server, arm) as ws:
        q_before = recv(ws)["state"]["q"]
        response = client.post(
            f"/api/sessions/{arm}/limits",
            json={"name": "slow", "type": "velocity", "params": {"velocities": joints}},
        )
        assert response.status_code == 201, response.text
        response = client.post(
            f"/api/sessions/{arm}/tasks",
            json={
                "name": "pin",
                "type": "frame",
                "role": "constraint",
                "params": {"frame": "ee"},
                "target": {"position": goal},
            },
        )
        assert response.status_code == 201, response.text

        failed = next_message(ws, lambda m: m["type"] == "state" and m["status"] == "failed")
        assert "failed to find a solution" in failed["error"] and "infeasible" in failed["error"]
        assert failed["q"] == q_before  # the last good q, untouched
        assert np.all(np.isfinite(failed["q"]))
        session = client.get(f"/api/sessions/{arm}").json()
        assert session["status"] == "failed" and "failed to find a solution" in session["error"]

        assert client.delete(f"/api/sessions/{arm}/limits/slow").status_code == 204
        state = next_message(ws, lambda m: m["type"] == "state" and m["status"] == "converged")
        assert state["error"] is None
    position, _ = site_pose(server.manager.registry.model("arm7"), state["q"], "ee")
    assert np.linalg.norm(position - goal) < 1e-4  # a hard constraint: met exactly
    assert client.get(f"/api/sessions/{arm}").json()["error"] is None
