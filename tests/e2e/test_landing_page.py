"""The landing page in a real headless browser: pick a robot, start a session, list it."""

from __future__ import annotations

import time
from typing import Any

import httpx
from support.servers import LiveServer

GROUPS = """() => {
  const shown = {};
  let category = null;
  for (const node of document.querySelectorAll('#robot-list > *')) {
    if (node.classList.contains('category')) category = node.textContent;
    else shown[node.dataset.robot] = category;
  }
  return shown;
}"""


def test_landing_page_starts_a_session_and_opens_its_viewer(
    full_app: LiveServer,
    browser: Any,
) -> None:
    page = browser.new_page()
    page.goto(full_app.base_url + "/")
    page.wait_for_selector('.robot-item[data-robot="arm7"]')
    assert page.locator('.robot-item[data-robot="humanoid"]').count() == 1
    # Every robot of the API is listed under its category (built-in ones first, then the
    # robots from files, "your robots").
    robots = httpx.get(f"{full_app.base_url}/api/robots").json()
    shown = page.evaluate(GROUPS)
    groups = {"builtin": "built-in", "local": "your robots", "uploaded": "your robots"}
    expected = {r["name"]: groups.get(r["source"], r["category"]) for r in robots}
    assert shown == expected
    assert any(r["source"] == "menagerie" for r in robots)
    # Menagerie robots this server cannot load (not in its checkout or download cache)
    # are marked, and picking one selects nothing.
    unavailable = sorted(r["name"] for r in robots if r["available"] == "unavailable")
    marked = page.locator(".robot-item.unavailable").evaluate_all(
        "nodes => nodes.map(n => n.dataset.robot)"
    )
    assert sorted(marked) == unavailable
    if unavailable:
        page.click(f'.robot-item[data-robot="{unavailable[0]}"]', force=True)
        assert page.locator('.robot-item[aria-selected="true"]').count() <= 1
        assert (
            page.get_attribute(f'.robot-item[data-robot="{unavailable[0]}"]', "aria-selected")
            != "true"
        )
    headers = page.locator(".category").evaluate_all("nodes => nodes.map(n => n.textContent)")
    rest = [h for h in headers[1:] if h != "your robots"]
    assert headers[0] == "built-in" and rest == sorted(rest)
    # The API docs are one click away.
    docs = page.get_by_role("link", name="API docs")
    assert docs.get_attribute("href") == "/docs"
    assert httpx.get(f"{full_app.base_url}/docs").status_code == 200
    page.fill("#robot-filter", "humanoid")
    assert page.locator('.robot-item[data-robot="arm7"]').count() == 0
    page.fill("#robot-filter", "")
    page.click('.robot-item[data-robot="arm7"]')
    page.wait_for_function("document.querySelectorAll('#keyframe-select option').length > 1")
    page.select_option("#keyframe-select", "home")
    page.click("#new-session")
    page.wait_for_url("**/viewer/*", timeout=20_000)
    session_id = page.url.rsplit("/", 1)[1]
    summary = httpx.get(f"{full_app.base_url}/api/sessions/{session_id}").json()
    assert summary["robot"] == "arm7"
    assert "ee" in summary["tasks"]  # the preset was added

    # Back on the landing page, the live session is listed with its watcher count.
    listing = browser.new_page()
    listing.goto(full_app.base_url + "/")
    row = listing.locator(f'.session-row[data-session="{session_id}"]')
    row.wait_for(timeout=10_000)
    deadline = time.monotonic() + 45
    while int(row.locator(".watchers").inner_text()) < 1:
        assert time.monotonic() < deadline, "the open viewer is not counted as a watcher"
        time.sleep(0.3)
    # An API error is shown, not swallowed.
    listing.evaluate(
        "fetch('/api/sessions', {method: 'POST', headers: {'Content-Type': 'application/json'},"
        " body: JSON.stringify({robot: 'no_such_robot'})})"
    )
    listing.set_input_files(
        "#spec-file",
        files=[
            {"name": "bad.json", "mimeType": "application/json", "buffer": b'{"robot": "arm7"}'}
        ],
    )
    listing.wait_for_selector("#error-box:not([hidden])")
    assert "spec" in listing.inner_text("#error-box").lower()
    page.close()
    listing.close()
    httpx.delete(f"{full_app.base_url}/api/sessions/{session_id}")
