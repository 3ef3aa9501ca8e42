"""How long a killed replica's sessions go without states, in a 3-replica cluster.

Starts three ``posekit up`` replicas on loopback sharing a fresh schema of a PostgreSQL
database, behind a real nginx rendered from ``deploy/nginx/posekit.conf.template`` (the
harness of the cluster tests, ``tests/support/cluster.py``), and creates ``--sessions``
arm7 sessions through nginx. Prints the sessions each replica owns. Then, ``--kills``
times: opens a websocket stream through nginx on a session of the replica owning the
most (a client that reconnects on its own: waits 0.1 s, doubling up to 1 s), kills that
replica's process group (kill -9), and prints

- from the kill to the first state on the stream again (the client reconnected through
  nginx and the session is solved by another replica),
- from the lease's expiry to that state (the expiry read from the ``leases`` table right
  after the kill: no one renews it any more),
- from the kill until every session of the dead replica is owned again (the replicas'
  ``posekit_sessions_owned`` add up to ``--sessions``),

and before the kills, how many replicas nginx tried to reach each session's owner (1:
the replica the id hashes to owns it; more: not_owner answers were retried),

then starts the killed replica again for the next round.

    python bench/cluster_failover.py [--sessions 12] [--kills 3] [--lease-ttl 5]
                                     [--postgres postgresql://postgres@127.0.0.1:5432/test]

Needs nginx (``tools/ensure_nginx.sh``), a PostgreSQL server and the dev extras.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx
import psycopg

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from support.cluster import Cluster, Replica, metric  # noqa: E402
from support.postgres import fresh_schema, server_url  # noqa: E402
from support.reconnecting_stream import ReconnectingStream  # noqa: E402


def owners(cluster: Cluster, sessions: list[str]) -> dict[str, str]:
    found = {sid: cluster.owner(sid) for sid in sessions}
    return {sid: r.replica_id for sid, r in found.items() if r is not None}


def tries_to_owner(cluster: Cluster, sessions: list[str]) -> Counter[int]:
    """How many sessions took 1, 2 or 3 tries (``X-Posekit-Upstream``) to reach their owner."""
    with cluster.client() as client:
        return Counter(
            len(client.get(f"/api/sessions/{sid}").headers["x-posekit-upstream"].split(","))
            for sid in sessions
        )


def owned_in_all(cluster: Cluster) -> float:
    total = 0.0
    for replica in cluster.replicas:
        if replica.alive:
            text = httpx.get(f"{replica.url}/api/metrics", timeout=5).text
            total += metric(text, "posekit_sessions_owned")
    return total


def lease_left_s(database: str, session_id: str) -> float:
    """Seconds until the session's lease expires, by the database's clock."""
    with psycopg.connect(database) as connection:
        row = connection.execute(
            "SELECT extract(epoch FROM expires_at - now()) FROM leases WHERE session_id = %s",
            (session_id,),
        ).fetchone()
    assert row is not None
    return float(row[0])


def one_kill(cluster: Cluster, database: str, sessions: list[str]) -> dict[str, float | str]:
    """Kill the replica owning the most sessions; the three delays [s] and its id."""
    current = owners(cluster, sessions)
    victim_id = Counter(current.values()).most_common()[0][0]
    victim: Replica = cluster.replica(victim_id)
    watched = next(sid for sid, owner in current.items() if owner == victim_id)
    stream = ReconnectingStream(cluster.ws_url(f"/api/sessions/{watched}/stream")).start()
    try:
        deadline = time.monotonic() + 30
        while not stream.states_since(0.0):
            if time.monotonic() > deadline:
                raise RuntimeError("no states before the kill")
            time.sleep(0.05)
        killed = time.monotonic()
        victim.kill()
        expiry = time.monotonic() + lease_left_s(database, watched)
        all_owned = None
        deadline = killed + 60
        while stream.first_state_after(killed) is None or all_owned is None:
            if all_owned is None and owned_in_all(cluster) >= len(sessions):
                all_owned = time.monotonic()
            if time.monotonic() > deadline:
                raise RuntimeError("the sessions did not come back within 60 s")
            time.sleep(0.02)
        first = stream.first_state_after(killed)
        assert first is not None
    finally:
        stream.close()
    victim.launch()
    victim.wait_healthy(time.monotonic() + 90)
    return {"victim": victim_id, "moved": sum(1 for o in current.values() if o == victim_id),
            "from_kill": first - killed, "from_expiry": first - expiry,
            "all_owned": all_owned - killed}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=12)
    parser.add_argument("--kills", type=int, default=3)
    parser.add_argument("--lease-ttl", type=float, default=5.0)
    parser.add_argument("--postgres", default=server_url())
    arguments = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as folder,
        fresh_schema(arguments.postgres) as database,
        Cluster(Path(folder), database, lease_ttl_s=arguments.lease_ttl) as cluster,
    ):
        with cluster.client() as client:
            sessions = [
                client.post("/api/sessions", json={"robot": "arm7"}).raise_for_status().json()["id"]
                for _ in range(arguments.sessions)
            ]
        per_replica = Counter(owners(cluster, sessions).values())
        print(f"{arguments.sessions} sessions created through nginx; owned per replica:")
        for replica in cluster.replicas:
            print(f"  {replica.replica_id}: {per_replica.get(replica.replica_id, 0)}")
        print(
            "replicas nginx tried to reach the owner (GET /api/sessions/{id}): "
            + ", ".join(
                f"{tries}: {count} sessions"
                for tries, count in sorted(tries_to_owner(cluster, sessions).items())
            )
        )
        print(f"lease TTL {arguments.lease_ttl:g} s; kill -9 of the owner of the most sessions:")
        rounds = []
        for index in range(1, arguments.kills + 1):
            result = one_kill(cluster, database, sessions)
            rounds.append(result)
            print(f"  kill {index}: {result['victim']} ({result['moved']} sessions): first state "
                  f"{result['from_kill']:.2f} s after the kill, {result['from_expiry']:.2f} s "
                  f"after the lease expired; all sessions owned again after "
                  f"{result['all_owned']:.2f} s")  # fmt: skip
        for key, label in (("from_kill", "kill"), ("from_expiry", "lease expiry")):
            values = [float(r[key]) for r in rounds]
            print(f"from {label} to the first state: median {statistics.median(values):.2f} s, "
                  f"max {max(values):.2f} s")  # fmt: skip


if __name__ == "__main__":
    main()
