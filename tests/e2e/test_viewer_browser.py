"""The viewer in a real headless browser, end to end on the built-in arm.

Landing page → new session → its viewer; a weight's log slider and its number field
change the task over REST; a look-at task added from the panel; the session link
copied; a scripted gizmo drag moves the streamed q; a second page on the same link
follows. Positions are compared with forward kinematics of the session's final q,
never with timings.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import mujoco
import numpy as np
from support.models import builtin_model
from support.servers import LiveServer
from support.waiting import wait_for
from websockets.sync.client import connect

NODE_POSITION = """(name) => {
  const refs = window.__viserMutable.nodeRefFromName;
  const node = (refs.current || refs)[name];
  return node ? [node.position.x, node.position.y, node.position.z] : null;
}"""
ROBOT_LOADED = (
    "window.__viserMutable && (() => { const r = window.__viserMutable.nodeRefFromName;"
    " return !!(r.current || r)['/robot/visual/link7']; })()"
)
DOWN = [0.0, 1.0, 0.0, 0.0]


def _eventually(check: Any, timeout: float = 20.0, what: str = "condition") -> Any:
    """``wait_for`` at a browser's pace (each check may evaluate in the page)."""
    return wait_for(check, timeout=timeout, what=what, poll=0.1)


def _slider(page: Any, label: str) -> Any:
    """The first slider whose row is labelled ``label`` (the first task's)."""
    return page.locator(
        f"xpath=//label[normalize-space(.)='{label}']"
        "/ancestor::*[.//*[@role='slider']][1]//*[@role='slider']"
    ).first


def _send(page: Any, message: dict[str, Any]) -> None:
    """Send a viser client message as the page's own client code would."""
    page.evaluate(f"window.__viserMutable.sendMessage({json.dumps(message)})")


def _drag(page: Any, name: str, position: list[float], wxyz: list[float]) -> None:
    """Grab, move and release a gizmo, as viser's transform controls report it."""
    _send(page, {"type": "TransformControlsDragStartMessage", "name": name, "owner": ""})
    _send(page, {"type": "TransformControlsUpdateMessage", "name": name, "wxyz": wxyz,
                 "position": position, "owner": ""})  # fmt: skip
    _send(page, {"type": "TransformControlsDragEndMessage", "name": name, "owner": ""})


def _link7_position(q: list[float]) -> np.ndarray:
    model = builtin_model("arm7")
    data = mujoco.MjData(model)
    data.qpos[:] = q
    mujoco.mj_kinematics(model, data)
    return data.xpos[model.body("link7").id].copy()


def _converged_q(api: httpx.Client, session_id: str) -> list[float]:
    state = _eventually(
        lambda: (s := api.get(f"/api/sessions/{session_id}/state").json())["converged"] and s,
        what="the session converged",
    )
    return state["q"]


def test_landing_page_to_a_shared_viewer(
    full_app: LiveServer,
    browser: Any,
) -> None:
    api = httpx.Client(base_url=full_app.base_url, timeout=30.0)
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()

    # Landing page: pick the built-in arm, start a session, land on its viewer.
    page.goto(full_app.base_url + "/")
    page.click('.robot-item[data-robot="arm7"]')
    page.click("#new-session")
    page.wait_for_url("**/viewer/*", timeout=20_000)
    session_id = page.url.rsplit("/", 1)[1]
    try:
        page.wait_for_function(ROBOT_LOADED, timeout=30_000)
        task_url = f"/api/sessions/{session_id}/tasks/ee"

        # A weight's log slider (keyboard: Home / End = its ends) is the cost over REST.
        slider = _slider(page, "position_cost")
        slider.focus()
        page.keyboard.press("End")
        _eventually(lambda: api.get(task_url).json()["params"]["position_cost"] == 1000.0,
                    what="slider cost over REST")  # fmt: skip
        page.keyboard.press("Home")
        _eventually(lambda: api.get(task_url).json()["params"]["position_cost"] == 1e-4,
                    what="slider's low end over REST")  # fmt: skip
        # Its number field holds the exact value; the slider follows (at log10 3.5).
        exact = page.get_by_label("position_cost =").first
        _eventually(lambda: exact.input_value() == "0.0001", what="the field shows the slider's")
        exact.fill("3.5")
        exact.press("Enter")
        _eventually(lambda: api.get(task_url).json()["params"]["position_cost"] == 3.5,
                    what="exact cost over REST")  # fmt: skip
        _eventually(lambda: abs(float(slider.get_attribute("aria-valuenow")) - 0.544) < 0.01,
                    what="slider at log10(3.5)")  # fmt: skip

        # A look-at task added from the panel exists over REST.
        page.get_by_text("Add task", exact=True).click()
        page.get_by_label("Type", exact=True).click()
        page.get_by_role("option", name="look_at", exact=True).click()
        page.get_by_label("Frame", exact=True).click()
        page.get_by_role("option", name="wrist_cam", exact=True).click()
        page.get_by_role("button", name="Add", exact=True).click()
        look = _eventually(
            lambda: [t for t in api.get(f"/api/sessions/{session_id}/tasks").json()
                     if t["type"] == "look_at"],
            what="look-at task over REST",
        )  # fmt: skip
        assert look[0]["params"]["frame"] == "wrist_cam"

        # The share button copies this page's link.
        page.get_by_role("button", name="Copy session link").click()
        _eventually(lambda: page.evaluate("navigator.clipboard.readText()")
                    == f"{full_app.base_url}/viewer/{session_id}", what="link copied")  # fmt: skip

        # A second page on the same link: both count as watchers.
        second = context.new_page()
        second.goto(f"{full_app.base_url}/viewer/{session_id}")
        second.wait_for_function(ROBOT_LOADED, timeout=30_000)
        _eventually(lambda: api.get(f"/api/sessions/{session_id}").json()["watchers"] >= 2,
                    what="two watchers")  # fmt: skip
        _eventually(lambda: "Viewers: 2" in second.inner_text("body"), what="viewer count shown")

        # A scripted gizmo drag on the first page moves the streamed q.
        q_before = _converged_q(api, session_id)
        stream_url = (
            full_app.base_url.replace("http", "ws", 1) + f"/api/sessions/{session_id}/stream"
        )
        with connect(stream_url) as stream:
            assert json.loads(stream.recv(timeout=10))["type"] == "hello"
            _drag(page, "/targets/ee", [0.42, 0.15, 0.35], DOWN)
            deadline = time.monotonic() + 20.0
            moved = 0.0
            while moved < 0.05 and time.monotonic() < deadline:
                message = json.loads(stream.recv(timeout=10))
                if message["type"] == "state":
                    moved = max(abs(a - b) for a, b in zip(message["q"], q_before, strict=True))
            assert moved >= 0.05, "the streamed q did not follow the drag"
        target = api.get(task_url).json()["target"]
        np.testing.assert_allclose(target["position"], [0.42, 0.15, 0.35])
        # The other viewer sees the gizmo where the first one dropped it.
        _eventually(
            lambda: np.allclose(
                second.evaluate(NODE_POSITION, "/targets/ee"), [0.42, 0.15, 0.35], atol=1e-6
            ),
            what="the second page's gizmo follows the drag",
        )

        # Both pages draw the robot where the session's q puts it.
        expected = _link7_position(_converged_q(api, session_id))
        for viewer_page in (second, page):
            _eventually(
                lambda p=viewer_page: np.allclose(
                    p.evaluate(NODE_POSITION, "/robot/visual/link7"), expected, atol=1e-4
                ),
                what="the page follows the session",
            )
        # A target set over REST moves the gizmo on the pages.
        api.patch(task_url, json={"target": {"position": [0.3, -0.2, 0.45]}}).raise_for_status()
        _eventually(
            lambda: np.allclose(
                second.evaluate(NODE_POSITION, "/targets/ee"), [0.3, -0.2, 0.45], atol=1e-6
            ),
            what="the gizmo follows REST",
        )
        second.close()
        page.close()
    finally:
        api.delete(f"/api/sessions/{session_id}")
        context.close()
        api.close()
