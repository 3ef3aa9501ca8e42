"""The API docs render in a real browser with every request to another host blocked:
Swagger UI at ``/docs`` and ReDoc at ``/redoc`` load everything from the app."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import expect
from support.servers import LiveServer

METHODS = {"get", "put", "post", "delete", "patch", "options", "head"}


def _operations(server: LiveServer) -> int:
    paths = httpx.get(f"{server.base_url}/openapi.json", timeout=30).json()["paths"]
    return sum(1 for item in paths.values() for method in item if method in METHODS)


def _offline_page(browser: Any, server: LiveServer, elsewhere: list[str]) -> Any:
    """A page that may reach ``server`` only: any other request is aborted and noted."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})

    def guard(route: Any) -> None:
        if route.request.url.startswith(server.base_url + "/"):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    page.route("**/*", guard)
    return page


@pytest.mark.parametrize(
    ("path", "operation"),
    [("/docs", ".opblock"), ("/redoc", '[data-section-id^="operation/"]')],
)
def test_api_docs_render_their_operations_offline(
    full_app: LiveServer, browser: Any, path: str, operation: str
) -> None:
    expected = _operations(full_app)
    assert expected > 20
    elsewhere: list[str] = []
    page = _offline_page(browser, full_app, elsewhere)
    failed: list[str] = []  # of the app's own files (ReDoc's footer logo, on Redocly's
    # CDN, is refused by the page's content security policy before any request is made)

    def note_failure(request: Any) -> None:
        if request.url.startswith(full_app.base_url):
            failed.append(request.url)

    page.on("requestfailed", note_failure)
    try:
        page.goto(full_app.base_url + path)
        # (a locator, not wait_for_function: the pages' CSP forbids evaluating strings)
        expect(page.locator(operation)).to_have_count(expected, timeout=30_000)
        assert "posekit" in page.title()
        assert elsewhere == []  # nothing was even asked of another host
        assert failed == []
    finally:
        page.close()
