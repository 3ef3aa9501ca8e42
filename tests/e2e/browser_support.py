"""A live server of the full app (API + viewer) and a headless Chromium for browser tests.

Importable as ``e2e.browser_support`` (``tests`` is on the pytest path).
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn
from posekit.app import create_app

CHROMIUM = "/usr/bin/chromium"


class FullAppServer:
    """``create_app()`` served by uvicorn on a free loopback port, in a thread."""

    def __init__(self) -> None:
        self.app = create_app()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(
            uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning")
        )
        self._thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> FullAppServer:
        self._thread.start()
        deadline = time.monotonic() + 30.0
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the app did not start within 30 s")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=10.0)


def require_chromium() -> None:
    """Browser tests need Debian's chromium; CI installs it, elsewhere they skip."""
    if shutil.which("chromium") or os.path.exists(CHROMIUM):
        return
    message = "Debian's chromium is not installed (make test installs it)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def full_app() -> Iterator[FullAppServer]:
    server = FullAppServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield instance
        instance.close()
