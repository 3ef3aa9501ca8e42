"""In Chromium: a 10 s drag on arm7 recorded as a take from the viewer, replayed with the
default weights and with orientation cost 0.01, both error curves overlaid in the
viewer, its figures the same as the REST comparison's."""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from support.own_server import OwnServer, start_own_server, stop_own_server
from websockets.sync.client import connect

pytestmark = pytest.mark.browser

ROBOT_SHOWN = "window.__viserMutable && !!window.__viserMutable.nodeRefFromName"
DRAG_S = 10.0


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnServer]:
    server = start_own_server(tmp_path_factory.mktemp("takes"))
    yield server
    stop_own_server(server)


def _drag(own: OwnServer, session: str) -> None:
    """The hand around a 5 cm circle for ``DRAG_S`` at 20 Hz, tilting as it goes."""
    url = own.live.base_url.replace("http", "ws", 1) + f"/api/sessions/{session}/stream"
    center = own.client.get(f"/api/sessions/{session}/tasks/ee").json()["target"]["position"]
    with connect(url, open_timeout=10) as stream:
        moves = int(DRAG_S * 20)
        for k in range(moves):
            angle = 2 * math.pi * k / moves
            tilt = 0.3 * math.sin(angle)
            target = {
                "position": [center[0], center[1] + 0.05 * math.sin(angle), center[2]],
                "wxyz": [0.0, math.cos(tilt / 2), 0.0, math.sin(tilt / 2)],
            }
            stream.send(json.dumps({"type": "target", "task": "ee", **target}))
            time.sleep(0.05)


def test_a_recorded_drag_is_compared_with_a_soft_orientation_in_the_viewer(
    browser: Any, own: OwnServer
) -> None:
    session = own.client.post("/api/sessions", json={"robot": "arm7"}).json()["id"]
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{own.live.base_url}/viewer/{session}")
        page.wait_for_function(ROBOT_SHOWN, timeout=30_000)
        page.get_by_text("Takes", exact=True).click()
        page.get_by_role("button", name="Record take").click()
        page.get_by_role("button", name="Stop take").wait_for(timeout=30_000)
        _drag(own, session)
        page.get_by_role("button", name="Stop take").click()
        page.get_by_text("kept:").wait_for(timeout=30_000)
        [take] = own.client.get(f"/api/sessions/{session}/takes").json()
        assert take["steps"] > 0 and take["events"] >= DRAG_S * 20

        page.get_by_role("button", name="Compare").click()
        legend = page.locator(".u-legend").filter(has_text="orientation_cost = 0.01")
        legend.wait_for(timeout=30_000)  # a plot of both curves, overlaid
        assert "as recorded" in legend.inner_text()
        shown = page.get_by_text(re.compile(r"RMS")).all_inner_texts()

        soft = {"label": "soft", "tasks": {"ee": {"orientation_cost": 0.01}}}
        figures = own.client.post(
            f"/api/sessions/{session}/takes/{take['id']}/compare",
            json={"variants": [{"label": "recorded"}, soft]},
        ).json()
        for figure in figures:
            rms = f"RMS {figure['tasks']['ee']['rms']:.4g}"
            assert any(rms in text for text in shown), (rms, shown)
    finally:
        page.close()
        own.client.delete(f"/api/sessions/{session}")
