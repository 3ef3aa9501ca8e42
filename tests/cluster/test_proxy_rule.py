"""The proxy rule of ``deploy/nginx/posekit.conf.template``, in a real nginx, in front of
three small HTTP servers that play the replicas' side of the protocol: each answers a
request naming a session it does not own with 503 ``not_owner`` (and records it), every
other request with its own name. What is checked is nginx's part alone: the session id
of every path shape is the hash key, retries go round the ring past not_owner answers
and dead replicas for every method, and requests naming no session are spread."""

from __future__ import annotations

import json
import re
import secrets
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from support.cluster import served_by
from support.nginx import Nginx
from support.ports import free_port

SESSION_PATH = re.compile(r"^/(?:api/sessions|viewer)/([^/?]+)")


class StandIn(ThreadingHTTPServer):
    """A replica's answers: ``owners`` maps session ids to the owning stand-in's name
    (absent: owned by whoever is asked, as a free lease is taken)."""

    def __init__(self, name: str, owners: dict[str, str]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.name = name
        self.owners = owners
        self.seen: list[tuple[str, str]] = []
        self.address = f"127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: StandIn

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        self.server.seen.append((self.command, self.path))
        match = SESSION_PATH.match(self.path)
        owner = self.server.owners.get(match.group(1), self.server.name) if match else None
        if owner is not None and owner != self.server.name:
            status, body = 503, {"code": "not_owner", "detail": f"owned by {owner}"}
            extra = {"Retry-After": "1", "X-Posekit-Owner": owner}
        else:
            status, body, extra = 200, {"replica": self.server.name}, {}
        payload = json.dumps(body).encode()
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", **extra}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _answer  # noqa: N815 (http.server's names)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def stand_ins(nginx_binary: str) -> Iterator[list[StandIn]]:
    owners: dict[str, str] = {}
    servers = [StandIn(f"replica-{i}", owners) for i in (1, 2, 3)]
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers]
    for thread in threads:
        thread.start()
    yield servers
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def proxy(tmp_path: Path, stand_ins: list[StandIn]) -> Iterator[httpx.Client]:
    nginx = Nginx(tmp_path, free_port(), [s.address for s in stand_ins])
    with httpx.Client(base_url=nginx.url, timeout=10) as client:
        yield client
    nginx.stop()


def _name(response: httpx.Response) -> str:
    return str(response.raise_for_status().json()["replica"])


def test_every_path_of_a_session_goes_to_one_replica(proxy: httpx.Client) -> None:
    chosen = {}
    for _ in range(24):
        sid = secrets.token_urlsafe(12)
        names = {
            _name(proxy.get(f"/api/sessions/{sid}")),
            _name(proxy.get(f"/api/sessions/{sid}/tasks/ee?x=1")),
            _name(proxy.get(f"/api/sessions/{sid}/stream")),
            _name(proxy.get(f"/viewer/{sid}")),
            _name(proxy.patch(f"/api/sessions/{sid}/tasks/ee", json={"gain": 0.5})),
        }
        assert len(names) == 1, (sid, names)
        chosen[sid] = names.pop()
    assert len(set(chosen.values())) == 3  # 24 ids spread over all three


def test_not_owner_answers_are_retried_round_the_ring_for_every_method(
    proxy: httpx.Client, stand_ins: list[StandIn]
) -> None:
    owners = stand_ins[0].owners
    retried = 0
    for index in range(12):
        sid = secrets.token_urlsafe(12)
        owner = stand_ins[index % 3]
        owners[sid] = owner.name
        for method in ("GET", "POST", "PATCH", "DELETE"):
            answer = proxy.request(method, f"/api/sessions/{sid}/tasks", json={"n": index})
            assert _name(answer) == owner.name
            assert served_by(answer) == owner.address
            retried += answer.headers["x-posekit-upstream"].count(",")
    assert retried > 0  # some ids hashed elsewhere first, and were retried to the owner


def test_a_dead_replica_is_skipped(proxy: httpx.Client, stand_ins: list[StandIn]) -> None:
    dead = stand_ins[1]
    on_dead = []
    for _ in range(30):
        sid = secrets.token_urlsafe(12)
        if _name(proxy.get(f"/api/sessions/{sid}")) == dead.name:
            on_dead.append(sid)
    assert on_dead
    dead.shutdown()
    dead.server_close()
    for sid in on_dead:
        assert _name(proxy.post(f"/api/sessions/{sid}/tasks", json={})) != dead.name


def test_requests_naming_no_session_are_spread(
    proxy: httpx.Client, stand_ins: list[StandIn]
) -> None:
    names = {_name(proxy.post("/api/sessions", json={"robot": "arm7"})) for _ in range(30)}
    names |= {_name(proxy.get("/api/robots")) for _ in range(30)}
    assert names == {s.name for s in stand_ins}
