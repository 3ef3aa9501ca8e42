"""The API docs pages, ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc), that work offline.

FastAPI's own pages load Swagger UI's and ReDoc's scripts and styles from a CDN, so on a
lab network or an offline laptop they stay blank. Here the same pages load them from
the app itself, under ``/docs/assets``: the release files bundled in the
``fastapi-offline`` package (installed from PyPI with posekit). Pages and assets are
ordinary routes of the app, so they pass the same access-token rules as every other
page; a content security policy keeps the pages from asking another host for anything.
"""

from __future__ import annotations

from importlib import resources

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS_URL = "/docs/assets"
ASSETS_PACKAGE = "fastapi_offline"  # its ``static/``: Swagger UI's and ReDoc's releases
# The pages may load and fetch from this server only (ReDoc's footer would otherwise ask
# Redocly's CDN for its logo, and hide it when that fails); their own inline script and
# styles, ``data:`` images and ReDoc's search worker (a ``blob:``) are allowed.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; "
    "worker-src 'self' blob:; connect-src 'self'"
)


def assets_dir() -> str:
    """The folder of the installed Swagger UI and ReDoc files."""
    return str(resources.files(ASSETS_PACKAGE) / "static")


def install_docs(app: FastAPI, favicon_url: str) -> None:
    """Serve ``/docs`` and ``/redoc`` on ``app`` with local assets.

    Args:
        app: An app made with ``docs_url=None, redoc_url=None`` (so FastAPI's CDN pages
            are not there too).
        favicon_url: The icon the pages show.
    """
    openapi_url = app.openapi_url or "/openapi.json"
    app.mount(ASSETS_URL, StaticFiles(directory=assets_dir()), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        page = get_swagger_ui_html(
            openapi_url=root + openapi_url,
            title=f"{app.title} - API docs",
            swagger_js_url=f"{root}{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=root + favicon_url,
            # No badge from the online validator: the page asks nothing of other hosts.
            swagger_ui_parameters={"validatorUrl": None},
        )
        page.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        return page

    @app.get("/redoc", include_in_schema=False)
    def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        page = get_redoc_html(
            openapi_url=root + openapi_url,
            title=f"{app.title} - API reference",
            redoc_js_url=f"{root}{ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=root + favicon_url,
            with_google_fonts=False,
        )
        page.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        return page
