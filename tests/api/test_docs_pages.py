"""``/docs`` and ``/redoc`` load Swagger UI and ReDoc from the app itself (never a CDN),
through the same access-token rules as every other page."""

from __future__ import annotations

import re

import httpx
import pytest
from posekit.settings import Settings
from support.servers import LiveServer

ASSETS = ["swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js"]


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_docs_pages_load_their_files_from_the_app(client: httpx.Client, path: str) -> None:
    page = client.get(path)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    sources += re.findall(r'spec-url="([^"]+)"', page.text)
    assert sources and all(source.startswith("/") for source in sources), sources
    assert "cdn" not in page.text and "googleapis" not in page.text
    assert "connect-src 'self'" in page.headers["content-security-policy"]
    for source in sources:
        assert client.get(source).status_code == 200, source


@pytest.mark.parametrize("name", ASSETS)
def test_the_assets_are_served(client: httpx.Client, name: str) -> None:
    asset = client.get(f"/docs/assets/{name}")
    assert asset.status_code == 200 and len(asset.content) > 100_000
    kind = "css" if name.endswith(".css") else "javascript"
    assert kind in asset.headers["content-type"]


def test_docs_and_their_assets_need_the_token() -> None:
    server = LiveServer(settings=Settings(token="s3cret")).start()
    try:
        for path in ["/docs", "/redoc", "/docs/assets/swagger-ui-bundle.js", "/openapi.json"]:
            assert httpx.get(server.base_url + path).status_code == 401, path
            granted = httpx.get(server.base_url + path, headers={"Authorization": "Bearer s3cret"})
            assert granted.status_code == 200, path
    finally:
        server.stop()
