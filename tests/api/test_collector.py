"""The garbage collector of ``posekit up``'s processes collects its youngest generation
every ``YOUNG_THRESHOLD`` allocations (:mod:`posekit.collector`), and ``/api/metrics``
shows the server process's collections."""

from __future__ import annotations

import gc
import re

import httpx
from posekit.collector import YOUNG_THRESHOLD, tune_collector
from support.servers import ServerProcess
from support.waiting import wait_for
from websockets.sync.client import connect

STATES = 600  # ten seconds of one session's states at 60 Hz


def test_tuning_raises_the_young_threshold_and_keeps_the_older_ones() -> None:
    before = gc.get_threshold()
    try:
        tune_collector()
        assert gc.get_threshold() == (YOUNG_THRESHOLD, before[1], before[2])
        tune_collector(1234)
        assert gc.get_threshold()[0] == 1234
    finally:
        gc.set_threshold(*before)


def _young_collections(base: str) -> int:
    text = httpx.get(f"{base}/api/metrics", timeout=10).text
    match = re.search(r'^python_gc_collections_total\{generation="0"\} (\S+)$', text, re.M)
    assert match, "the metrics show the server process's collections"
    return int(float(match.group(1)))


def test_streaming_states_runs_few_young_collections() -> None:
    """With CPython's 700 a session's ten seconds of states brought five young
    collections (checked); with the tuned threshold, none or one."""
    served = ServerProcess(robot="arm7")
    try:
        assert wait_for(
            lambda: httpx.get(f"{served.url}/api/sessions", timeout=5).json(),
            timeout=60,
            what="the first session",
        )
        session = httpx.get(f"{served.url}/api/sessions", timeout=10).json()[0]["id"]
        httpx.patch(  # out of reach: the session keeps stepping
            f"{served.url}/api/sessions/{session}/solver", json={"tolerance": 1e-300}, timeout=10
        ).raise_for_status()
        before = _young_collections(served.url)
        with connect(served.ws_url(session)) as ws:
            ws.send('{"type": "target", "task": "ee", "position": [0.3, 0.1, 0.4]}')
            received = 0
            while received < STATES:
                received += '"type":"state"' in str(ws.recv(timeout=10))
        assert _young_collections(served.url) - before <= 1
    finally:
        served.stop()
