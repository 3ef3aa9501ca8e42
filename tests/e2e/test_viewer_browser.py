"""The viewer in a real headless browser: weights, adding tasks, dragging, shared sessions."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest
from e2e.browser_support import FullAppServer, browser, full_app  # noqa: F401
from websockets.sync.client import connect

LINK7_POSITION = """() => {
  const refs = window.__viserMutable.nodeRefFromName;
  const node = (refs.current || refs)['/robot/visual/link7'];
  return node ? [node.position.x, node.position.y, node.position.z] : null;
}"""


def _open_viewer(browser: Any, base_url: str, session_id: str) -> Any:  # noqa: F811
    page = browser.new_page()
    page.goto(f"{base_url}/viewer/{session_id}")
    page.wait_for_function(
        "window.__viserMutable && (() => { const r = window.__viserMutable.nodeRefFromName;"
        " return !!(r.current || r)['/robot/visual/link7']; })()",
        timeout=30_000,
    )
    return page


def _drag(page: Any, name: str, position: list[float], wxyz: list[float]) -> None:
    message = {"type": "TransformControlsUpdateMessage", "name": name, "wxyz": wxyz,
               "position": position, "owner": ""}  # fmt: skip
    page.evaluate(f"window.__viserMutable.sendMessage({json.dumps(message)})")


def _eventually(check: Any, timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.1)


@pytest.fixture
def session_id(full_app: FullAppServer) -> Any:  # noqa: F811
    with httpx.Client(base_url=full_app.base_url) as client:
        response = client.post("/api/sessions", json={"robot": "arm7"})
        assert response.status_code == 201, response.text
        yield response.json()["id"]
        client.delete(f"/api/sessions/{response.json()['id']}")


def test_viewer_drives_and_follows_the_session(
    full_app: FullAppServer,  # noqa: F811
    browser: Any,  # noqa: F811
    session_id: str,
) -> None:
    api = httpx.Client(base_url=full_app.base_url)
    page = _open_viewer(browser, full_app.base_url, session_id)

    # A weight typed into the panel is the task's cost over REST.
    page.get_by_label("position_cost (exact)").first.fill("3.5")
    page.get_by_label("position_cost (exact)").first.press("Enter")
    _eventually(
        lambda: (
            api.get(f"/api/sessions/{session_id}/tasks/ee").json()["params"]["position_cost"] == 3.5
        )
    )

    # A look-at task added from the panel exists over REST.
    page.get_by_text("Add task", exact=True).click()
    page.get_by_label("Type", exact=True).click()
    page.get_by_role("option", name="look_at", exact=True).click()
    page.get_by_label("Frame", exact=True).click()
    page.get_by_role("option", name="wrist_cam", exact=True).click()
    page.get_by_role("button", name="Add", exact=True).click()
    _eventually(
        lambda: any(
            t["type"] == "look_at" for t in api.get(f"/api/sessions/{session_id}/tasks").json()
        )
    )

    # A second viewer on the same link: both count as watchers.
    second = _open_viewer(browser, full_app.base_url, session_id)
    _eventually(lambda: api.get(f"/api/sessions/{session_id}").json()["watchers"] >= 2)
    before = second.evaluate(LINK7_POSITION)

    # A scripted gizmo drag moves the streamed q, and the second page follows.
    stream_url = full_app.base_url.replace("http", "ws") + f"/api/sessions/{session_id}/stream"
    with connect(stream_url) as stream:
        assert json.loads(stream.recv(timeout=10))["type"] == "hello"
        q_before = api.get(f"/api/sessions/{session_id}/state").json()["q"]
        _drag(page, "/targets/ee", [0.42, 0.15, 0.35], [0.0, 1.0, 0.0, 0.0])
        deadline = time.monotonic() + 15.0
        moved = 0.0
        while moved < 0.05 and time.monotonic() < deadline:
            message = json.loads(stream.recv(timeout=10))
            if message["type"] == "state":
                moved = max(abs(a - b) for a, b in zip(message["q"], q_before, strict=True))
        assert moved >= 0.05
    target = api.get(f"/api/sessions/{session_id}/tasks/ee").json()["target"]
    assert target["position"] == pytest.approx([0.42, 0.15, 0.35])
    _eventually(
        lambda: (
            max(abs(a - b) for a, b in zip(second.evaluate(LINK7_POSITION), before, strict=True))
            > 0.01
        )
    )
    page.close()
    second.close()
