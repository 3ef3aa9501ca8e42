"""Fencing: an owner paused (SIGSTOP) until its lease expired and another replica took
the session over cannot write once it resumes: a change sent to it is refused as
not_owner, and what is stored is the new owner's."""

from __future__ import annotations

import httpx
from support.cluster import Cluster, Replica
from support.waiting import wait_for


def _served_elsewhere(cluster: Cluster, sid: str, paused: Replica) -> Replica | None:
    """A live replica other than ``paused`` that now serves ``sid`` (asking it makes it
    take the lease once expired, as a request routed there would)."""
    for replica in cluster.replicas:
        if replica is paused:
            continue
        try:
            answer = httpx.get(
                f"{replica.url}/api/sessions/{sid}", headers=cluster.headers, timeout=2
            )
        except httpx.HTTPError:
            continue
        if answer.status_code == 200:
            return replica
    return None


def test_a_resumed_owner_cannot_write_after_a_takeover(cluster: Cluster) -> None:
    with cluster.client() as client:
        sid = client.post("/api/sessions", json={"robot": "arm7"}).raise_for_status().json()["id"]
        client.patch(f"/api/sessions/{sid}/tasks/ee", json={"position_cost": 1.25})
        old = cluster.owner(sid)
        assert old is not None
        old.pause()
        try:
            new = wait_for(
                lambda: _served_elsewhere(cluster, sid, old),
                timeout=cluster.lease_ttl_s + 10,
                what="another replica taking the session over",
            )
            ack = httpx.patch(
                f"{new.url}/api/sessions/{sid}/tasks/ee", json={"position_cost": 7.0},
                headers=cluster.headers, timeout=10,
            )  # fmt: skip
            assert ack.status_code == 200, ack.text
        finally:
            old.resume()
        stale = httpx.patch(
            f"{old.url}/api/sessions/{sid}/tasks/ee", json={"position_cost": 9.0},
            headers=cluster.headers, timeout=10,
        )  # fmt: skip
        assert stale.status_code == 503 and stale.json()["code"] == "not_owner", stale.text
        assert stale.headers["x-posekit-owner"] == new.replica_id
        routed = client.patch(f"/api/sessions/{sid}/tasks/ee", json={"position_cost": 7.5})
        assert routed.status_code == 200, routed.text  # the proxy finds the new owner
        assert client.get(f"/api/sessions/{sid}/tasks/ee").json()["params"]["position_cost"] == 7.5
        # What is stored is the new owner's: kill it, and the session comes back from the
        # database (on the resumed replica or the third) with the new owner's last change.
        new.kill()
        again = wait_for(
            lambda: cluster.owner(sid), timeout=cluster.lease_ttl_s + 10, what="a third owner"
        )
        assert again is not new
        ee = httpx.get(
            f"{again.url}/api/sessions/{sid}/tasks/ee", headers=cluster.headers, timeout=10
        ).json()
        assert ee["params"]["position_cost"] == 7.5
