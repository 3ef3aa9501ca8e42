"""In Chromium: a number typed into the viewer is applied once, when committed (Enter),
never keystroke by keystroke; a refused one puts the last accepted value back; a live
reload of the robot's files that fails is shown in the viewer."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from support.own_server import OwnServer, start_own_server, stop_own_server
from support.waiting import wait_for

ROBOT_SHOWN = "window.__viserMutable && !!window.__viserMutable.nodeRefFromName"
KEYSTROKE_MS = 120  # [ms] between keys: each one reaches the server as its own update
SETTLE_S = 2.0  # [s] past the viewer's commit pause: nothing more may be applied


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnServer]:
    server = start_own_server(tmp_path_factory.mktemp("typed"))
    yield server
    stop_own_server(server)


def _viewer(browser: Any, own: OwnServer, robot: str) -> tuple[Any, str]:
    session = own.client.post("/api/sessions", json={"robot": robot}).json()["id"]
    page = browser.new_page()
    page.goto(f"{own.live.base_url}/viewer/{session}")
    page.wait_for_function(ROBOT_SHOWN, timeout=30_000)
    return page, session


def _type(field: Any, text: str) -> None:
    field.click()
    field.press("Control+a")
    field.press("Backspace")
    field.type(text, delay=KEYSTROKE_MS)


def _ee(client: httpx.Client, session: str) -> tuple[float, int]:
    cost = client.get(f"/api/sessions/{session}/tasks/ee").json()["params"]["position_cost"]
    return cost, client.get(f"/api/sessions/{session}/state").json()["revision"]


def test_a_typed_cost_is_applied_once_on_enter_and_a_refused_one_is_put_back(
    browser: Any, own: OwnServer
) -> None:
    page, session = _viewer(browser, own, "arm7")
    try:
        field = page.get_by_label("position_cost =").first
        field.wait_for(timeout=30_000)
        _, before = _ee(own.client, session)
        _type(field, "0.025")  # 0, 0., 0.0, 0.02, 0.025 reach the server one by one
        field.press("Enter")
        wait_for(lambda: _ee(own.client, session)[0] == 0.025, what="the typed cost applied")
        time.sleep(SETTLE_S)
        assert _ee(own.client, session) == (0.025, before + 1)  # one change, not five

        _type(field, "2000000")  # above the largest cost, 10⁶: refused
        field.press("Enter")
        wait_for(lambda: field.input_value() == "0.025", what="the accepted cost put back")
        time.sleep(SETTLE_S)
        assert _ee(own.client, session) == (0.025, before + 1)  # nothing changed
    finally:
        page.close()
        own.client.delete(f"/api/sessions/{session}")


def test_a_reload_that_fails_is_shown_in_the_viewer(browser: Any, own: OwnServer) -> None:
    arm = own.robots / "my_arm.xml"
    good = arm.read_text()
    page, session = _viewer(browser, own, "my_arm")
    try:
        arm.write_text(good.replace("</mujoco>", "<body"))  # no longer XML
        page.get_by_text("could not be used").first.wait_for(timeout=30_000)
        state = own.client.get(f"/api/sessions/{session}").json()
        assert state["reload"]["status"] == "failed"
    finally:
        arm.write_text(good)
        page.close()
        own.client.delete(f"/api/sessions/{session}")
