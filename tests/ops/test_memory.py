"""Bounded memory: robot models are released once no session uses them."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
from posekit.memory import note_freed, release_noted
from support.models import needs_menagerie
from support.servers import ServerProcess
from support.waiting import wait_for

ROBOTS = [
    "aloha",
    "franka_emika_panda",
    "kuka_iiwa_14",
    "shadow_hand",
    "stanford_tidybot",
    "unitree_g1",
    "unitree_h1",
    "universal_robots_ur5e",
]


def resident_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for {pid}")


def settled_sizes(pids: list[int]) -> dict[int, float]:
    """RSS of ``pids`` once it stopped changing."""

    def settled() -> dict[int, float] | None:
        before = {pid: resident_mib(pid) for pid in pids}
        time.sleep(1.0)
        after = {pid: resident_mib(pid) for pid in pids}
        return after if all(abs(after[p] - before[p]) < 0.02 * before[p] for p in pids) else None

    return wait_for(settled, timeout=60, what="settled resident sizes")


def cycle(client: httpx.Client, robot: str, pids: list[int] | None = None) -> list[float]:
    """Create a session on ``robot``, wait until it was solved, delete it; the RSS of
    ``pids`` while it was live."""
    session = client.post("/api/sessions", json={"robot": robot})
    assert session.status_code == 201, session.text
    sid = session.json()["id"]
    wait_for(
        lambda: client.get(f"/api/sessions/{sid}/state").json()["seq"] > 1,
        timeout=60,
        what=f"a solved state of {robot}",
    )
    live = [resident_mib(pid) for pid in pids or []]
    assert client.delete(f"/api/sessions/{sid}").status_code == 204
    return live


@needs_menagerie
def test_sessions_on_eight_robots_leave_the_server_near_a_fresh_servers_size() -> None:
    server = ServerProcess(POSEKIT_MODEL_CACHE_IDLE_S="1")
    try:
        client = httpx.Client(base_url=server.url, timeout=120)
        cycle(client, "arm7")  # a fresh server as `make run` leaves it: one session served
        pids = [server.process.pid]
        wait_for(lambda: client.get("/api/health").json()["sessions"] == 0, what="no session")
        fresh = settled_sizes(pids)
        live = [cycle(client, robot, pids) for robot in ROBOTS]
        peak = {pid: max(sizes[i] for sizes in live) for i, pid in enumerate(pids)}
        assert peak[pids[0]] > fresh[pids[0]] + 100, (fresh, peak)  # G1 was in

        def back_to_fresh() -> bool:
            return all(resident_mib(pid) <= 1.25 * fresh[pid] for pid in pids)

        wait_for(back_to_fresh, timeout=30, what="RSS within 25 % of a fresh server's", poll=0.5)
    finally:
        server.stop()


def wait_solved(client: httpx.Client, session_ids: set[str]) -> None:
    """Wait until every session of ``session_ids`` was stepped (a new session's state is
    seq 1, its first step's 2)."""
    unsolved = set(session_ids)

    def all_solved() -> bool:
        for sid in list(unsolved):
            if client.get(f"/api/sessions/{sid}/state").json()["seq"] > 1:
                unsolved.discard(sid)
        return not unsolved

    wait_for(all_solved, timeout=60, what="a solved state of every session")


def test_ended_sessions_give_their_memory_back() -> None:
    """300 arm7 sessions created, each solved at least once, and deleted, twice: the
    server trims its heap after they end (``posekit.memory.note_freed``), instead of
    keeping what they freed (about 150 MB a round before)."""
    server = ServerProcess(POSEKIT_MAX_SESSIONS="400")
    try:
        client = httpx.Client(base_url=server.url, timeout=120)
        cycle(client, "arm7")
        pids = [server.process.pid]
        wait_for(lambda: client.get("/api/health").json()["sessions"] == 0, what="no session")
        fresh = settled_sizes(pids)
        for _ in range(2):
            created = [client.post("/api/sessions", json={"robot": "arm7"}) for _ in range(300)]
            assert all(answer.status_code == 201 for answer in created), created[-1].text
            wait_solved(client, {answer.json()["id"] for answer in created})
            for answer in created:
                assert client.delete(f"/api/sessions/{answer.json()['id']}").status_code == 204

        def back_to_fresh() -> bool:
            return all(resident_mib(pid) <= fresh[pid] + 40 for pid in pids)

        wait_for(back_to_fresh, timeout=30, what="RSS within 40 MiB of a fresh server's", poll=0.5)
    finally:
        server.stop()


def test_the_heap_is_trimmed_once_per_noted_release() -> None:
    release_noted()  # whatever was noted before this test
    assert release_noted() is False
    note_freed()
    note_freed()
    assert release_noted() is True
    assert release_noted() is False
