"""One session's viewer: its own viser server, scene, gizmos and panels.

The viser server listens on 127.0.0.1 only, on a free port; browsers reach it through
the app's relay at ``/viewer/{sid}`` (one external port). Everyone on the link shares
the scene and the panels. A render thread follows the session at most ``fps`` times a
second and redraws only when the session produced a new state.
"""

from __future__ import annotations

import logging
import threading
import time

import mujoco
import numpy as np
import viser
from posekit.sessions.session import Session
from posekit.sessions.subscription import Subscription

from posekit_viewer.gizmos import TargetGizmos
from posekit_viewer.panels import SessionPanels
from posekit_viewer.scene_renderer import SceneRenderer

logger = logging.getLogger(__name__)

CAMERA_POSITION = (1.6, -1.6, 1.3)  # [m] initial eye point, looking at the robot's base
CAMERA_LOOK_AT = (0.0, 0.0, 0.4)


class SessionViewer:
    """The live viewer of ``session``; ``link`` is the shareable page URL shown in it."""

    def __init__(self, session: Session, link: str, fps: float = 60.0) -> None:
        self.session = session
        self.server = viser.ViserServer(host="127.0.0.1", port=0, verbose=False)
        self.renderer = SceneRenderer(self.server, session.model)
        self.gizmos = TargetGizmos(self.server, session)
        self.panels = SessionPanels(self.server, session, link)
        self._data = mujoco.MjData(session.model)
        self._period = 1.0 / fps
        self._stop = threading.Event()
        self._last_seq = -1
        self._last_revision = -1
        self._last_viewers = -1
        self._watching: dict[int, Subscription] = {}
        self.server.on_client_connect(self._client_connected)
        self.server.on_client_disconnect(self._client_disconnected)
        self._thread = threading.Thread(target=self._run, name=f"viewer-{session.id}", daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        """Loopback port of this viewer's viser server."""
        return self.server.get_port()

    @property
    def viewers(self) -> int:
        """Number of browsers connected to this viewer."""
        return len(self.server.get_clients())

    def _client_connected(self, client: viser.ClientHandle) -> None:
        """Count the browser as a watcher of the session and frame the robot for it."""
        loop = self.server.get_event_loop()
        self._watching[client.client_id] = self.session.subscribe(loop=loop, initial_state=False)
        client.camera.position = CAMERA_POSITION
        client.camera.look_at = CAMERA_LOOK_AT

    def _client_disconnected(self, client: viser.ClientHandle) -> None:
        subscription = self._watching.pop(client.client_id, None)
        if subscription is not None:
            subscription.close()

    def tick(self) -> bool:
        """Follow the session once; returns whether anything was redrawn."""
        state = self.session.state
        revision = self.session.revision
        viewers = self.viewers
        if (state.seq, revision, viewers) == (
            self._last_seq,
            self._last_revision,
            self._last_viewers,
        ):
            return False
        self._last_seq, self._last_revision, self._last_viewers = state.seq, revision, viewers
        q = np.asarray(state.q)
        self.renderer.render(q)
        self._data.qpos[:] = q
        mujoco.mj_kinematics(self.session.model, self._data)
        self.gizmos.sync(self._data)
        self.panels.refresh(viewers)
        return True

    def _run(self) -> None:
        next_time = time.monotonic()
        while not self._stop.is_set():
            if self.session.closed:
                break
            try:
                self.tick()
            except Exception:  # a broken frame must not kill the viewer
                logger.exception("viewer of session %s failed to draw", self.session.id)
            next_time += self._period
            delay = next_time - time.monotonic()
            if delay < 0:
                next_time = time.monotonic()
                delay = 0.0
            self._stop.wait(delay)

    def stop(self) -> None:
        """Stop drawing and shut the viser server down."""
        self._stop.set()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=2.0)
        for subscription in self._watching.values():
            subscription.close()
        self._watching.clear()
        self.server.stop()
