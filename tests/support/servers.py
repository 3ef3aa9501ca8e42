"""The app on a free loopback port: in a thread (``LiveServer``) or as ``posekit up`` in a
subprocess (``ServerProcess``, for restarts, SIGKILL and environment settings)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import uvicorn
from posekit.app import create_app
from posekit.serve import uvicorn_config
from posekit.sessions import SessionManager
from posekit.settings import Settings
from uvicorn.config import LOGGING_CONFIG

from support.ports import free_port

REPO = Path(__file__).resolve().parents[2]


class LiveServer:
    """``create_app()`` served by uvicorn on ``127.0.0.1:<free port>``, in a thread.

    With a ``manager``, it serves that manager's sessions (default settings unless
    ``settings`` are given); without one, the app builds its own from ``settings`` or the
    ``POSEKIT_*`` environment, with Menagerie downloads off whatever they say.
    """

    def __init__(
        self, manager: SessionManager | None = None, settings: Settings | None = None
    ) -> None:
        if settings is None:
            settings = Settings.from_env({} if manager is not None else None)
        settings = settings.model_copy(update={"menagerie_download": False})
        self.app = create_app(settings, manager=manager)
        self.manager: SessionManager = self.app.state.manager
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        # As ``posekit up`` serves it, with uvicorn's own logging at warning.
        config = uvicorn_config(
            self.app, settings, log_config=LOGGING_CONFIG, log_level="warning", access_log=True
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
        deadline = time.monotonic() + 30.0
        while not self.server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(20.0)


class ServerProcess:
    """``posekit up`` in a subprocess with the given ``POSEKIT_*`` environment."""

    def __init__(self, robot: str = "none", args: tuple[str, ...] = (), **environment: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, **environment)
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "posekit.cli",
                "up",
                "--port",
                str(self.port),
                "--robot",
                robot,
                *args,
            ],
            env=env,
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60.0
        while True:
            try:
                if httpx.get(self.url + "/api/health", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("posekit up did not start")
            time.sleep(0.2)

    def ws_url(self, session_id: str) -> str:
        return f"ws://127.0.0.1:{self.port}/api/sessions/{session_id}/stream"

    def stop(self, kill: bool = False) -> None:
        self.process.send_signal(signal.SIGKILL if kill else signal.SIGINT)
        self.process.wait(timeout=30)
