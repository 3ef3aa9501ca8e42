"""First sight in a real browser: no console errors, correct plurals, the camera framing
the robot (on open and on "Frame robot"), gizmos big enough to grab, and a scene's
mocap bodies drawn muted.

Sizes are measured in the page: the bounding box of each mesh under a scene path is
projected with the page's own three.js camera; fractions are of the view's height
(normalised device coordinates span 2).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from support.models import needs_menagerie
from support.servers import LiveServer
from support.waiting import wait_for

VIEW = {"width": 1400, "height": 900}
PROJECTED = """(prefix) => {
  const mutable = window.__viserMutable;
  const refs = mutable.nodeRefFromName.current || mutable.nodeRefFromName;
  const camera = mutable.camera;
  camera.updateMatrixWorld();
  const low = [Infinity, Infinity], high = [-Infinity, -Infinity];
  let meshes = 0;
  for (const [name, node] of Object.entries(refs)) {
    if (!name.startsWith(prefix) || !node || !node.traverse) continue;
    node.updateWorldMatrix(true, true);
    node.traverse((child) => {
      if (!child.isMesh || !child.geometry || !child.visible) return;
      meshes += 1;
      child.geometry.computeBoundingBox();
      const box = child.geometry.boundingBox;
      for (let i = 0; i < 8; i++) {
        const corner = box.min.clone().set(i & 4 ? box.max.x : box.min.x,
          i & 2 ? box.max.y : box.min.y, i & 1 ? box.max.z : box.min.z);
        corner.applyMatrix4(child.matrixWorld).project(camera);
        low[0] = Math.min(low[0], corner.x); low[1] = Math.min(low[1], corner.y);
        high[0] = Math.max(high[0], corner.x); high[1] = Math.max(high[1], corner.y);
      }
    });
  }
  return meshes ? {low, high, height: (high[1] - low[1]) / 2} : null;
}"""
MATERIALS = """(prefix) => {
  const refs = window.__viserMutable.nodeRefFromName.current
    || window.__viserMutable.nodeRefFromName;
  const found = [];
  for (const [name, node] of Object.entries(refs)) {
    if (!name.startsWith(prefix) || !node || !node.traverse) continue;
    node.traverse((child) => {
      if (child.isMesh && child.material) {
        found.push({transparent: child.material.transparent, opacity: child.material.opacity});
      }
    });
  }
  return found;
}"""
LOADED = """(name) => { const m = window.__viserMutable; if (!m) return false;
  const refs = m.nodeRefFromName.current || m.nodeRefFromName; return !!refs[name]; }"""


@pytest.fixture
def watched(browser: Any) -> Iterator[tuple[Any, list[str]]]:
    """A 1400×900 page and the problems it reports: console errors, uncaught exceptions,
    and responses of 400 or more (what a browser's console lists as errors)."""
    page = browser.new_page(viewport=VIEW)
    problems: list[str] = []
    page.on(
        "console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda error: problems.append(f"exception: {error}"))
    page.on(
        "response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None
    )
    yield page, problems
    page.close()


def _session(app: LiveServer, robot: str) -> str:
    response = httpx.post(f"{app.base_url}/api/sessions", json={"robot": robot}, timeout=60.0)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _settled_view(page: Any, prefix: str) -> dict[str, Any]:
    """The projected box of ``prefix`` once the camera stopped moving."""
    previous: list[Any] = [None]

    def still() -> Any:
        box = page.evaluate(PROJECTED, prefix)
        same = box is not None and box == previous[0]
        previous[0] = box
        return box if same else None

    return wait_for(still, timeout=60.0, what=f"{prefix} drawn and still", poll=0.5)


def _open_viewer(page: Any, app: LiveServer, session_id: str, node: str) -> None:
    page.goto(f"{app.base_url}/viewer/{session_id}")
    page.wait_for_function(LOADED, arg=node, timeout=60_000)


def _robot_detail(page: Any, app: LiveServer) -> str:
    page.goto(app.base_url + "/")
    page.wait_for_selector('.robot-item[data-robot="arm7"]')
    page.wait_for_function("document.getElementById('robot-detail').textContent.includes('DoF')")
    return str(page.inner_text("#robot-detail"))


def test_the_landing_page_counts_in_words(
    full_app: LiveServer, watched: tuple[Any, list[str]]
) -> None:
    page, _ = watched
    detail = _robot_detail(page, full_app)  # arm7: one keyframe, two sites
    assert "1 keyframe" in detail and "1 keyframes" not in detail and "2 sites" in detail


def test_the_landing_page_and_a_viewer_load_without_console_errors(
    full_app: LiveServer, watched: tuple[Any, list[str]]
) -> None:
    page, problems = watched
    _robot_detail(page, full_app)
    time.sleep(1.0)  # the icon and the session list load after the page
    session_id = _session(full_app, "arm7")
    try:
        _open_viewer(page, full_app, session_id, "/robot/visual/link7")
        _settled_view(page, "/robot/visual/")
        assert not problems, problems
        icon = httpx.get(f"{full_app.base_url}/favicon.ico")
        assert icon.headers["content-type"].startswith("image/svg+xml") and b"<svg" in icon.content
    finally:
        httpx.delete(f"{full_app.base_url}/api/sessions/{session_id}")


def test_the_camera_frames_the_robot_and_reframes_it(
    full_app: LiveServer, watched: tuple[Any, list[str]]
) -> None:
    page, _ = watched
    session_id = _session(full_app, "arm7")
    try:
        _open_viewer(page, full_app, session_id, "/robot/visual/link7")
        robot = _settled_view(page, "/robot/visual/")
        assert 0.35 <= robot["height"] <= 0.9, robot  # a sensible part of the view
        assert min(robot["low"]) >= -1.0 and max(robot["high"]) <= 1.0  # all of it
        # The tool's gizmo is easy to grab: at least 8 % of the view's height.
        gizmo = _settled_view(page, "/targets/ee")
        assert gizmo["height"] >= 0.08, gizmo
        # Zoomed far out, "Frame robot" brings the robot back.
        page.mouse.move(500, 450)
        page.mouse.wheel(0, 4000)
        far = _settled_view(page, "/robot/visual/")
        assert far["height"] < 0.5 * robot["height"]
        page.get_by_role("button", name="Frame robot").click()
        wait_for(lambda: page.evaluate(PROJECTED, "/robot/visual/")["height"] >= 0.35,
                 timeout=20.0, what="reframed", poll=0.3)  # fmt: skip
        reframed = _settled_view(page, "/robot/visual/")
        assert 0.35 <= reframed["height"] <= 0.9
        assert min(reframed["low"]) >= -1.0 and max(reframed["high"]) <= 1.0
    finally:
        httpx.delete(f"{full_app.base_url}/api/sessions/{session_id}")


@needs_menagerie
def test_g1_is_framed_and_its_scene_mocap_bodies_are_muted(
    full_app: LiveServer, watched: tuple[Any, list[str]]
) -> None:
    page, problems = watched
    session_id = _session(full_app, "unitree_g1")
    try:
        _open_viewer(page, full_app, session_id, "/scene_mocap/com_target")
        robot = _settled_view(page, "/robot/visual/")
        assert 0.35 <= robot["height"] <= 0.9, robot
        assert min(robot["low"]) >= -1.0 and max(robot["high"]) <= 1.0
        markers = page.evaluate(MATERIALS, "/scene_mocap/")
        assert len(markers) == 5
        assert all(m["transparent"] and m["opacity"] < 0.5 for m in markers), markers
        bodies = page.evaluate(MATERIALS, "/robot/visual/")
        assert bodies and all(m["opacity"] == 1.0 for m in bodies)
        tasks = httpx.get(f"{full_app.base_url}/api/sessions/{session_id}/tasks").json()
        hand = next(t["name"] for t in tasks if t["type"] == "frame" and "foot" not in t["name"])
        gizmo = _settled_view(page, f"/targets/{hand}")
        assert gizmo["height"] >= 0.08, (hand, gizmo)
        assert not problems, problems
    finally:
        httpx.delete(f"{full_app.base_url}/api/sessions/{session_id}")
