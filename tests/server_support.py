"""A real uvicorn server on a free loopback port, in a thread, plus client helpers.

Importable as ``server_support`` (``tests`` is on the pytest path).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import mujoco
import numpy as np
import pytest
import uvicorn
from posekit.app import create_app
from posekit.sessions import SessionManager
from posekit.settings import Settings
from websockets.sync.client import ClientConnection, connect

# Tests that load Menagerie robots (the fixture lives in live_server_fixtures).
needs_menagerie = pytest.mark.usefixtures("_menagerie")


class LiveServer:
    """``create_app(manager)`` served by uvicorn on ``127.0.0.1:<free port>``."""

    def __init__(self, manager: SessionManager | None = None) -> None:
        self.manager = manager if manager is not None else SessionManager()
        self.app = create_app(Settings.from_env({}), manager=self.manager)
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        config = uvicorn.Config(
            self.app, log_level="warning", ws_max_size=1 << 20, ws_per_message_deflate=False
        )
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ws_url(self, session_id: str) -> str:
        return f"ws://127.0.0.1:{self.port}/api/sessions/{session_id}/stream"

    def start(self) -> LiveServer:
        self._thread.start()
        deadline = time.monotonic() + 20.0
        while not self.server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(20.0)


def open_stream(server: LiveServer, session_id: str) -> ClientConnection:
    """A websocket client on the session's stream (hello not yet read)."""
    return connect(server.ws_url(session_id), open_timeout=10, close_timeout=2)


def recv(ws: ClientConnection, timeout: float = 5.0) -> dict[str, Any]:
    """The next message, decoded."""
    return json.loads(ws.recv(timeout=timeout))


def wait_for(
    ws: ClientConnection,
    predicate: Callable[[dict[str, Any]], bool],
    timeout: float = 10.0,
    what: str = "message",
) -> dict[str, Any]:
    """Read messages until one satisfies ``predicate``; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"no {what} within {timeout} s; last message: {last}")
        try:
            last = recv(ws, timeout=remaining)
        except TimeoutError:
            continue
        if predicate(last):
            return last


def site_pose(model: mujoco.MjModel, q: list[float], site: str) -> tuple[np.ndarray, np.ndarray]:
    """World position and rotation matrix of a site at configuration ``q``."""
    data = mujoco.MjData(model)
    data.qpos[:] = q
    mujoco.mj_kinematics(model, data)
    site_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, site)
    return data.site_xpos[site_id].copy(), data.site_xmat[site_id].reshape(3, 3).copy()


def quat_to_matrix(wxyz: list[float]) -> np.ndarray:
    matrix = np.zeros(9)
    mujoco.mju_quat2Mat(matrix, np.asarray(wxyz, dtype=float))
    return matrix.reshape(3, 3)


def rotation_angle(a: np.ndarray, b: np.ndarray) -> float:
    """Angle [rad] of the rotation between two rotation matrices."""
    cos = (np.trace(a.T @ b) - 1.0) / 2.0
    return float(np.arccos(np.clip(cos, -1.0, 1.0)))
