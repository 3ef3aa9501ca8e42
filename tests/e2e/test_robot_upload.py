"""The landing page in a real browser: drop your own robot on it, then open a session."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from posekit.robots import RobotRegistry
from posekit.sessions import SessionManager
from posekit.settings import Settings
from support.robot_files import write_mjcf_arm, zip_folder
from support.servers import LiveServer

DROP = """([name, data]) => {
  const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  const transfer = new DataTransfer();
  transfer.items.add(new File([bytes], name, { type: "application/zip" }));
  const zone = document.getElementById("robot-drop");
  for (const kind of ["dragenter", "dragover", "drop"]) {
    zone.dispatchEvent(new DragEvent(kind, { dataTransfer: transfer, bubbles: true, cancelable: true }));
  }
}"""


@pytest.fixture
def app(tmp_path: Path) -> Iterator[LiveServer]:
    settings = Settings.from_env({"POSEKIT_DATA_DIR": str(tmp_path / "data")})
    server = LiveServer(SessionManager(RobotRegistry(menagerie=False)), settings).start()
    yield server
    server.stop()


def landing_with_a_dropped_arm(app: LiveServer, browser: Any, tmp_path: Path) -> tuple[Any, str]:
    """The landing page with the zipped folder of an arm (``bench_arm``) dropped on it;
    the page and the archive (base64)."""
    write_mjcf_arm(tmp_path / "bench_arm")
    archive = base64.b64encode(zip_folder(tmp_path / "bench_arm")).decode()
    page = browser.new_page()
    page.goto(app.base_url + "/")
    page.wait_for_selector('.robot-item[data-robot="arm7"]')
    page.evaluate(DROP, ["bench_arm.zip", archive])
    return page, archive


def test_a_robot_dropped_on_the_landing_page_is_uploaded_and_opens_a_session(
    app: LiveServer, browser: Any, tmp_path: Path
) -> None:
    page, _ = landing_with_a_dropped_arm(app, browser, tmp_path)
    item = page.locator('.robot-item[data-robot="bench_arm"][aria-selected="true"]')
    item.wait_for(timeout=30_000)
    status = page.inner_text("#upload-status")
    assert "bench_arm is ready" in status and "tool" in status, status
    # Listed with the robots users brought, and described like any robot.
    group = page.evaluate(
        """() => { let group = null;
          for (const node of document.querySelectorAll('#robot-list > *')) {
            if (node.classList.contains('category')) group = node.textContent;
            else if (node.dataset.robot === 'bench_arm') return group; } }"""
    )
    assert group == "your robots"
    page.wait_for_function("document.querySelector('#robot-detail').textContent.includes('DoF')")
    page.click("#new-session")
    page.wait_for_url("**/viewer/*", timeout=20_000)
    session_id = page.url.rsplit("/", 1)[1]
    summary = httpx.get(f"{app.base_url}/api/sessions/{session_id}").json()
    assert summary["robot"] == "bench_arm" and summary["tasks"] == ["tool", "posture"]
    page.wait_for_selector("canvas", timeout=20_000)  # the viewer draws the robot
    # A file the server refuses is reported on the page, not swallowed.
    back = browser.new_page()
    back.goto(app.base_url + "/")
    back.wait_for_selector('.robot-item[data-robot="bench_arm"]')
    back.set_input_files(
        "#robot-file",
        files=[{"name": "broken.xml", "mimeType": "text/xml", "buffer": b"<mujoco><worldbody>"}],
    )
    back.wait_for_selector("#error-box:not([hidden])")
    assert "malformed XML" in back.inner_text("#error-box")
    page.close()
    back.close()


def test_an_upload_whose_name_is_taken_is_renamed_on_the_page(
    app: LiveServer, browser: Any, tmp_path: Path
) -> None:
    """The same folder uploaded twice: the page keeps the file, asks for another name,
    and uploads it under that name."""
    page, archive = landing_with_a_dropped_arm(app, browser, tmp_path)
    page.locator('.robot-item[data-robot="bench_arm"]').wait_for(timeout=30_000)
    page.evaluate(DROP, ["bench_arm.zip", archive])
    page.wait_for_selector("#upload-again:not([hidden])", timeout=30_000)
    assert "already exists" in page.inner_text("#error-box")
    page.fill("#robot-name", "bench_arm_2")
    page.click("#upload-again")
    page.locator('.robot-item[data-robot="bench_arm_2"][aria-selected="true"]').wait_for(
        timeout=30_000
    )
    assert "bench_arm_2 is ready" in page.inner_text("#upload-status")
    assert page.is_hidden("#upload-again")
    names = [robot["name"] for robot in httpx.get(f"{app.base_url}/api/robots").json()]
    assert {"bench_arm", "bench_arm_2"} <= set(names)
    page.close()
