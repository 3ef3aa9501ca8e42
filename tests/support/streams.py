"""Websocket stream clients of a live server, and pose helpers to check solved states."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import mujoco
import numpy as np
from websockets.sync.client import ClientConnection, connect

from support.servers import LiveServer


def open_stream(server: LiveServer, session_id: str) -> ClientConnection:
    """A websocket client on the session's stream (hello not yet read)."""
    return connect(server.ws_url(session_id), open_timeout=10, close_timeout=2)


def recv(ws: ClientConnection, timeout: float = 5.0) -> dict[str, Any]:
    """The next message, decoded."""
    return json.loads(ws.recv(timeout=timeout))


def next_message(
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
