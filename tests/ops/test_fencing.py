"""Fencing with real processes: a replica stopped with SIGSTOP past its lease cannot
write after SIGCONT. Its session was taken over by the other replica meanwhile; the
change sent to the resumed replica is refused (503 ``not_owner``, never acknowledged),
the stored session is the new owner's, and the resumed replica stops solving it.
"""

from __future__ import annotations

import os
import signal

import httpx
from support.servers import ServerProcess
from support.waiting import wait_for

TTL_S = "1"


def damping(name: str) -> dict[str, object]:
    return {"name": name, "type": "damping", "params": {"cost": 1e-3}}


def test_a_paused_owner_cannot_write_after_it_resumes(postgres_url: str) -> None:
    env = {"POSEKIT_DB": postgres_url, "POSEKIT_LEASE_TTL_S": TTL_S}
    a = ServerProcess(POSEKIT_REPLICA_ID="a", **env)
    b = ServerProcess(POSEKIT_REPLICA_ID="b", **env)
    paused = False
    try:
        with (
            httpx.Client(base_url=a.url, timeout=30) as on_a,
            httpx.Client(base_url=b.url, timeout=30) as on_b,
        ):
            sid = on_a.post("/api/sessions", json={"robot": "arm7"}).json()["id"]
            tasks = f"/api/sessions/{sid}/tasks"
            assert on_a.post(tasks, json=damping("before_pause")).status_code == 201
            os.kill(a.process.pid, signal.SIGSTOP)
            paused = True
            wait_for(
                lambda: on_b.get(f"/api/sessions/{sid}").status_code == 200,
                timeout=30,
                what="takeover by b",
                poll=0.2,
            )
            assert on_b.post(tasks, json=damping("by_b")).status_code == 201
            os.kill(a.process.pid, signal.SIGCONT)
            paused = False
            refused = on_a.post(tasks, json=damping("by_a"))
            assert refused.status_code == 503, refused.text
            assert refused.json()["code"] == "not_owner"
            assert refused.headers["x-posekit-owner"] == "b"
            names = {t["name"] for t in on_b.get(tasks).json()}
            assert {"before_pause", "by_b"} <= names and "by_a" not in names
            wait_for(
                lambda: on_a.get("/api/health").json()["sessions"] == 0,
                timeout=30,
                what="the resumed replica drops the session",
            )
            assert on_b.get("/api/health").json()["sessions"] == 1
    finally:
        if paused:
            os.kill(a.process.pid, signal.SIGCONT)
        a.stop()
        b.stop()
