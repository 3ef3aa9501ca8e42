"""Browser and HTTP hygiene with a token and CORS origins set: preflights answered before
the token is asked for, Host names checked (DNS rebinding), cross-site websockets
refused, a blank token refused at start."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest
import viser
from posekit.settings import Settings
from support.ports import free_port
from support.servers import REPO, LiveServer
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect
from websockets.typing import Subprotocol

TOKEN = "s3cret"
ALLOWED = "https://lab.example.org"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def guarded() -> Iterator[LiveServer]:
    settings = Settings.from_env({"POSEKIT_TOKEN": TOKEN, "POSEKIT_CORS_ORIGINS": ALLOWED})
    server = LiveServer(settings=settings).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def session_id(guarded: LiveServer) -> str:
    response = httpx.post(
        f"{guarded.base_url}/api/sessions", json={"robot": "arm7"}, headers=AUTH, timeout=30
    )
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def test_a_cors_preflight_is_answered_without_the_token(guarded: LiveServer) -> None:
    preflight = httpx.options(
        f"{guarded.base_url}/api/sessions",
        headers={"Origin": ALLOWED, "Access-Control-Request-Method": "POST"},
    )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == ALLOWED
    refused = httpx.get(f"{guarded.base_url}/api/sessions", headers={"Origin": ALLOWED})
    assert refused.status_code == 401  # the request itself still needs the token
    assert refused.headers["access-control-allow-origin"] == ALLOWED  # readable by the page


def test_other_host_names_are_refused(guarded: LiveServer) -> None:
    assert httpx.get(f"{guarded.base_url}/api/health").status_code == 200
    rebound = httpx.get(f"{guarded.base_url}/api/health", headers={"Host": "evil.example"})
    assert rebound.status_code == 400


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("http://evil.example", False),
        ("http://127.0.0.1:1", False),  # another port is another origin
        ("same", True),
        (ALLOWED, True),
        (None, True),  # not a browser: the token guards it
    ],
)
def test_websockets_from_other_sites_are_refused(
    guarded: LiveServer, session_id: str, origin: str | None, allowed: bool
) -> None:
    headers = dict(AUTH)
    if origin is not None:
        headers["Origin"] = f"http://127.0.0.1:{guarded.port}" if origin == "same" else origin
    viewer_protocol = [Subprotocol(f"viser-v{viser.__version__}")]
    for path, protocols in (
        (f"/api/sessions/{session_id}/stream", None),
        (f"/viewer/{session_id}", viewer_protocol),
    ):
        url = f"ws://127.0.0.1:{guarded.port}{path}"
        options = {"additional_headers": headers, "subprotocols": protocols, "open_timeout": 30}
        if allowed:
            with connect(url, **options) as websocket:
                assert websocket.recv(timeout=30)
        else:
            with pytest.raises(InvalidStatus):
                connect(url, **options).close()


def test_a_blank_token_is_refused_at_start() -> None:
    env = dict(os.environ, POSEKIT_TOKEN="   ")
    result = subprocess.run(
        [sys.executable, "-m", "posekit.cli", "up", "--port", str(free_port()), "--robot", "none"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "POSEKIT_TOKEN must not be blank" in result.stderr
