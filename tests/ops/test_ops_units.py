"""Settings, token middleware, metrics and the SQLite store, without a server."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from posekit.api.observability import Metrics
from posekit.api.security import TokenAuth
from posekit.sessions.store.sqlite_store import SQLiteStore
from posekit.settings import Settings, SettingsError


def test_settings_from_environment() -> None:
    settings = Settings.from_env(
        {
            "POSEKIT_PORT": "9000",
            "POSEKIT_TOKEN": "s3cret",
            "POSEKIT_CORS_ORIGINS": "https://a.org, https://b.org",
            "POSEKIT_WS_RATE": "30.5",
            "POSEKIT_DB": "/tmp/x.sqlite3",
        }
    )
    assert settings.port == 9000 and settings.token == "s3cret" and settings.ws_rate == 30.5
    assert settings.cors_origins == ("https://a.org", "https://b.org")
    assert Settings.from_env({}) == Settings()


@pytest.mark.parametrize(
    ("variable", "value", "fragment"),
    [
        ("POSEKIT_PORT", "eighty", "integer"),
        ("POSEKIT_MAX_SESSIONS", "0", ">= 1"),
        ("POSEKIT_WS_RATE", "-1", ">= 0"),
        ("POSEKIT_IDLE_UNLOAD_S", "nan", ">= 0"),
    ],
)
def test_bad_settings_name_the_variable(variable: str, value: str, fragment: str) -> None:
    with pytest.raises(SettingsError, match=variable) as error:
        Settings.from_env({variable: value})
    assert fragment in str(error.value)


def _call(app: TokenAuth, scope: dict[str, Any]) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return sent


async def _ok_app(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


def _scope(
    path: str = "/api/sessions",
    headers: list | None = None,
    query: bytes = b"",
    kind: str = "http",
    method: str = "GET",
) -> dict:
    return {
        "type": kind,
        "path": path,
        "method": method,
        "headers": headers or [],
        "query_string": query,
    }


def test_token_is_required_and_accepted_three_ways() -> None:
    app = TokenAuth(_ok_app, "s3cret")
    assert _call(app, _scope())[0]["status"] == 401
    assert _call(app, _scope(headers=[(b"authorization", b"Bearer wrong")]))[0]["status"] == 401
    assert _call(app, _scope(headers=[(b"authorization", b"Bearer s3cret")]))[0]["status"] == 200
    assert _call(app, _scope(headers=[(b"cookie", b"posekit_token=s3cret")]))[0]["status"] == 200
    with_query = _call(app, _scope(query=b"token=s3cret&x=1"))[0]
    assert with_query["status"] == 307  # the token leaves the URL (and the history)
    assert (b"location", b"/api/sessions?x=1") in with_query["headers"]
    assert (
        b"set-cookie",
        b"posekit_token=s3cret; Path=/; HttpOnly; SameSite=Strict",
    ) in with_query["headers"]
    behind_tls = _call(
        TokenAuth(_ok_app, "s3cret", trust_forwarded_proto=True),
        _scope(query=b"token=s3cret", headers=[(b"x-forwarded-proto", b"https")]),
    )[0]
    assert any(k == b"set-cookie" and v.endswith(b"; Secure") for k, v in behind_tls["headers"])
    ws_query = _call(app, _scope(kind="websocket", query=b"token=s3cret"))
    assert ws_query[0]["status"] == 200  # websockets may give it in the query
    change = _call(app, _scope(query=b"token=s3cret", method="POST"))  # a change may not
    assert change[0]["status"] == 401 and b"not in the URL" in change[1]["body"]
    assert _call(app, _scope(path="/api/health"))[0]["status"] == 200
    refused = _call(app, _scope(kind="websocket"))
    assert refused == [{"type": "websocket.close", "code": 4401, "reason": "access token required"}]


def test_metrics_render_prometheus_text() -> None:
    metrics = Metrics()
    metrics.observe_steps([120.0, 80.0])
    metrics.count_request(200)
    metrics.count_request(422)
    metrics.gauge("posekit_sessions", "Live sessions.", lambda: 3)
    text = metrics.render().decode()
    assert "posekit_steps_total 2" in text  # a batch of two steps
    assert 'posekit_rejected_requests_total{status="422"} 1' in text
    assert "posekit_sessions 3" in text
    assert 'posekit_solve_time_us_bucket{le="200.0"} 2' in text
    assert 'posekit_solve_time_us_bucket{le="100.0"} 1' in text  # each duration observed
    assert "_created" not in text  # no creation-time series
    assert text.endswith("\n")


def test_sqlite_store_round_trip_and_durability(tmp_path: Path) -> None:
    path = tmp_path / "data" / "posekit.sqlite3"
    store = SQLiteStore(path)
    store.save_session("a", {"robot": "arm7", "q": [0.0] * 7}, 1)
    store.save_session("b", {"robot": "humanoid"}, 1)
    store.save_session("a", {"robot": "arm7", "q": [1.0] * 7}, 2)
    store.delete_session("b")
    store.delete_session("unknown")
    # Another connection (another process after a crash) sees every acknowledged save.
    other = sqlite3.connect(str(path))
    rows = other.execute("SELECT id, spec FROM sessions").fetchall()
    assert [(r[0], json.loads(r[1])["q"][0]) for r in rows] == [("a", 1.0)]
    assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    other.close()
    store.close()
    assert list(SQLiteStore(path).load_all()) == [("a", {"robot": "arm7", "q": [1.0] * 7}, 2)]
