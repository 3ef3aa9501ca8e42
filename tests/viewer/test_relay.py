"""``/viewer/{sid}`` on the app's one port: viser's page, and its websocket relayed.

The relay forwards bytes both ways with viser's ``viser-v<version>`` subprotocol to
the session's own viser server on 127.0.0.1, which stops with the session.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import msgspec
import pytest
import viser
from support.servers import LiveServer
from viser import _messages
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

PROTOCOL = f"viser-v{viser.__version__}"
# What a browser sends first: viser counts a client as connected from its camera on.
CAMERA = _messages.ViewerCameraMessage(
    wxyz=(1.0, 0.0, 0.0, 0.0), position=(1.0, -1.0, 1.0), fov=1.0, near=0.01, far=100.0,
    image_height=480, image_width=640, look_at=(0.0, 0.0, 0.0), up_direction=(0.0, 0.0, 1.0),
)  # fmt: skip


@pytest.fixture
def session_id(full_app: LiveServer) -> Iterator[str]:
    response = httpx.post(f"{full_app.base_url}/api/sessions", json={"robot": "arm7"})
    assert response.status_code == 201, response.text
    yield response.json()["id"]
    httpx.delete(f"{full_app.base_url}/api/sessions/{response.json()['id']}")


def _socket_url(app: LiveServer, session_id: str) -> str:
    return app.base_url.replace("http", "ws", 1) + f"/viewer/{session_id}"


def test_the_viewer_page_and_its_relayed_socket(full_app: LiveServer, session_id: str) -> None:
    page = httpx.get(f"{full_app.base_url}/viewer/{session_id}")
    assert page.status_code == 200
    assert "Viser client" in page.text
    with connect(_socket_url(full_app, session_id), subprotocols=[PROTOCOL],
                 max_size=None) as socket:  # fmt: skip
        assert socket.subprotocol == PROTOCOL
        first = socket.recv(timeout=20)
        assert isinstance(first, bytes) and first  # viser's msgpack frames, as they are
        received = len(first)
        deadline = time.monotonic() + 10
        while received < 10_000 and time.monotonic() < deadline:  # the scene upload
            received += len(socket.recv(timeout=10))
        assert received >= 10_000
        socket.send(msgspec.msgpack.encode(CAMERA.as_serializable_dict()))  # browser -> viser
        summary_url = f"{full_app.base_url}/api/sessions/{session_id}"
        deadline = time.monotonic() + 10  # counted once viser's connect callback ran
        while httpx.get(summary_url).json()["watchers"] < 1:
            assert time.monotonic() < deadline, "the relayed browser is not a watcher"
            time.sleep(0.1)
        # A task added over REST shows its gizmo in this session's viewer.
        viewer = full_app.app.state.viewer_hub.get(session_id)
        assert viewer is not None
        added = httpx.post(
            f"{full_app.base_url}/api/sessions/{session_id}/tasks",
            json={"type": "look_at", "name": "look", "params": {"frame": "wrist_cam"},
                  "target": {"position": [0.6, 0.1, 0.2]}},
        )  # fmt: skip
        assert added.status_code == 201, added.text
        deadline = time.monotonic() + 10
        while "look" not in viewer.gizmos.names:
            assert time.monotonic() < deadline, "no gizmo for the task added over REST"
            time.sleep(0.05)
        assert list(viewer.gizmos.handle("look").position) == pytest.approx([0.6, 0.1, 0.2])
        # Deleting the session stops its viewer: the relayed socket closes.
        httpx.delete(f"{full_app.base_url}/api/sessions/{session_id}")
        with pytest.raises(ConnectionClosed):
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                socket.recv(timeout=15)


def test_an_unknown_session_has_no_viewer(full_app: LiveServer) -> None:
    assert httpx.get(f"{full_app.base_url}/viewer/no-such-session").status_code == 404
    try:
        with connect(_socket_url(full_app, "no-such-session"), subprotocols=[PROTOCOL]) as socket:
            with pytest.raises(ConnectionClosed) as closed:
                socket.recv(timeout=10)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4404
    except InvalidStatus as refused:  # refused before the upgrade is as good
        assert refused.response.status_code in (403, 404)


def test_a_viewer_that_cannot_revive_its_session_is_refused_cleanly(
    full_app: LiveServer,
    session_id: str,
) -> None:
    manager = full_app.app.state.manager
    manager.get(session_id).last_used -= 1e6  # idle for long enough
    assert session_id in manager.unload_idle()
    full_limit = manager.max_sessions
    manager.max_sessions = manager.count()  # reviving it would exceed the limit
    try:
        with connect(_socket_url(full_app, session_id), subprotocols=[PROTOCOL]) as socket:
            with pytest.raises(ConnectionClosed) as closed:
                socket.recv(timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4429
        assert "maximum" in closed.value.rcvd.reason
        page = httpx.get(f"{full_app.base_url}/viewer/{session_id}")
        assert page.status_code == 429 and "maximum" in page.json()["detail"]
    finally:
        manager.max_sessions = full_limit
    assert httpx.get(f"{full_app.base_url}/viewer/{session_id}").status_code == 200  # revived
    assert manager.get(session_id).id == session_id
