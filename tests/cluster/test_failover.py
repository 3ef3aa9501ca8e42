"""Killing a replica (kill -9) moves its sessions to
another replica: a websocket client connected through nginx reconnects on its own and
gets states again within 5 s of the lease's expiry, and every change acknowledged before
the kill is there after it."""

from __future__ import annotations

import time
from collections import Counter

import pytest
from support.cluster import Cluster, viewer_frame
from support.reconnecting_stream import ReconnectingStream
from support.waiting import wait_for

SESSIONS = 6
AFTER_EXPIRY_S = 5.0  # the bound: states again within 5 s of the lease's expiry


def test_killing_the_owner_moves_its_sessions_without_losing_changes(cluster: Cluster) -> None:
    with cluster.client() as client:
        sessions = [
            client.post("/api/sessions", json={"robot": "arm7"}).raise_for_status().json()["id"]
            for _ in range(SESSIONS)
        ]
        owners = {sid: cluster.owner(sid) for sid in sessions}
        victim = Counter(owner.replica_id for owner in owners.values() if owner).most_common()[0][0]
        doomed = [sid for sid, owner in owners.items() if owner and owner.replica_id == victim]
        acknowledged = {}
        for index, sid in enumerate(doomed):  # acknowledged changes, the last just before
            change = {
                "position_cost": 2.0 + index,
                "target": {"position": [0.4, 0.05 * index, 0.3]},
            }
            client.patch(f"/api/sessions/{sid}/tasks/ee", json=change).raise_for_status()
            acknowledged[sid] = change
        watched = doomed[0]
        stream = ReconnectingStream(
            cluster.ws_url(f"/api/sessions/{watched}/stream"), headers=cluster.headers
        ).start()
        try:
            wait_for(lambda: stream.states_since(0.0), timeout=20, what="states before the kill")
            killed_at = time.monotonic()
            cluster.replica(victim).kill()
            # The lease was renewed at most when the replica died: it expires by then + TTL.
            deadline = cluster.lease_ttl_s + AFTER_EXPIRY_S
            wait_for(
                lambda: stream.states_since(killed_at) and stream.connections >= 2,
                timeout=deadline,
                what=f"states on a new connection within {deadline} s of the kill",
            )
        finally:
            stream.close()
        for sid in doomed:
            new_owner = wait_for(lambda sid=sid: cluster.owner(sid), timeout=10, what="new owner")
            assert new_owner.replica_id != victim
            ee = client.get(f"/api/sessions/{sid}/tasks/ee").raise_for_status().json()
            assert ee["params"]["position_cost"] == acknowledged[sid]["position_cost"]
            position = acknowledged[sid]["target"]["position"]
            assert ee["target"]["position"] == pytest.approx(position, abs=1e-12)
        listed = {s["id"] for s in client.get("/api/sessions").raise_for_status().json()}
        assert set(sessions) <= listed
        assert viewer_frame(cluster, watched)  # a viewer opened again is served by the new owner
