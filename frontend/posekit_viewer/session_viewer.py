"""One session's viewer: its own viser server, scene, gizmos and panels.

The viser server listens on a loopback port the system picks (``port=0``); browsers
reach it only through the app's relay at ``/viewer/{sid}``, behind the token (one
external port). Processes on the same machine can reach that port: deployments that
share a machine with untrusted users run posekit in its own container (README,
"Deploying"). Everyone on the link shares
the scene and the panels. A render thread follows the session at most ``fps`` times a
second: when the session produced a new state or accepted a change, it writes the body
poses and the gizmos in one ``server.atomic()`` update; the panels follow at most
``PANEL_HZ`` times a second. When the session is deleted the viewer stops itself. When
the session's robot model is reloaded (its files changed), the scene, the gizmos and the
panels are built again on the new model, for every browser already connected.

Each browser's camera frames the robot and its targets when it connects (and on "Frame
robot"): :mod:`posekit_viewer.camera_framing` on the robot's bounding box at the drawn
``q``; gizmos are sized from that box (:func:`posekit_viewer.gizmos.gizmo_scale`).
"""

from __future__ import annotations

import logging
import threading
import time

import numpy as np
import viser
from posekit.sessions.live.session import Session
from posekit.sessions.live.subscription import Subscription
from posekit.sessions.takes.library import TakeLibrary

from posekit_viewer.camera_framing import DEFAULT_DIRECTION, frame_box
from posekit_viewer.gizmos import DEFAULT_SCALE, TargetGizmos, gizmo_scale
from posekit_viewer.panels import SessionPanels
from posekit_viewer.quiet_viser import route_viser_output
from posekit_viewer.scene_renderer import SceneRenderer

logger = logging.getLogger(__name__)

CAMERA_FOV = np.radians(45.0)  # vertical field of view: little perspective distortion
DEFAULT_ASPECT = 16.0 / 9.0  # until a browser reports its canvas
PANEL_HZ = 10.0  # the panels (text, plot, widgets) follow the session at most this often
PANEL_IDLE_PERIOD = 0.5  # [s] and at least this often (viewer count, rejected edits)


class SessionViewer:
    """The live viewer of ``session``; ``link`` is the shareable page URL shown in it.

    With ``start=False`` no render thread runs: call :meth:`tick` yourself (benchmarks).
    """

    def __init__(
        self,
        session: Session,
        link: str,
        fps: float = 60.0,
        start: bool = True,
        takes: TakeLibrary | None = None,
    ) -> None:
        self.session = session
        self.link = link
        self.takes = takes
        route_viser_output()
        self.server = viser.ViserServer(host="127.0.0.1", port=0, verbose=False)
        self.url = f"ws://127.0.0.1:{self.server.get_port()}/"
        """Where the app's relay reaches this viewer's viser server."""
        self._build()
        self._period = 1.0 / fps
        self._stop = threading.Event()
        self._stop_lock = threading.Lock()
        self._stopped = False
        self._drawn: tuple[int, int] = (-1, -1)  # (state seq, session revision) last drawn
        self._panels_due = True
        self._panels_at = -float("inf")
        self._watching: dict[int, Subscription] = {}
        self.server.on_client_connect(self._client_connected)
        self.server.on_client_disconnect(self._client_disconnected)
        self._thread = threading.Thread(target=self._run, name=f"viewer-{session.id}", daemon=True)
        if start:
            self._thread.start()

    @property
    def viewers(self) -> int:
        """Number of browsers connected to this viewer."""
        return len(self.server.get_clients())

    @property
    def drawn(self) -> tuple[int, int]:
        """(state seq, session revision) of the last update drawn; (-1, -1) before any."""
        return self._drawn

    @property
    def stopped(self) -> bool:
        """Whether the viewer was stopped (its viser server is shut down)."""
        return self._stopped

    def _client_connected(self, client: viser.ClientHandle) -> None:
        """Count the browser as a watcher of the session and frame the robot for it."""
        loop = self.server.get_event_loop()
        self._watching[client.client_id] = self.session.subscribe(loop=loop, initial_state=False)
        self.frame(client, DEFAULT_DIRECTION)

    def frame(self, client: viser.ClientHandle, direction: np.ndarray | None = None) -> None:
        """Point ``client``'s camera at the robot and its targets, whole in the view.

        The camera looks from ``direction`` (toward the eye), by default from where it
        looks now; see :func:`posekit_viewer.camera_framing.frame_box`.
        """
        bounds = self.renderer.bounds()
        if bounds is None:
            return
        points = np.vstack([*bounds, self.gizmos.positions()])
        camera = client.camera
        if direction is None:
            direction = np.asarray(camera.position) - np.asarray(camera.look_at)
            if not np.all(np.isfinite(direction)) or np.linalg.norm(direction) < 1e-9:
                direction = DEFAULT_DIRECTION
        aspect = camera.aspect if camera.image_height > 0 else DEFAULT_ASPECT
        pose = frame_box(points.min(axis=0), points.max(axis=0), CAMERA_FOV, aspect, direction)
        with client.atomic():
            camera.fov = CAMERA_FOV
            camera.up_direction = (0.0, 0.0, 1.0)
            camera.position = pose.position
            camera.look_at = pose.look_at

    def _client_disconnected(self, client: viser.ClientHandle) -> None:
        subscription = self._watching.pop(client.client_id, None)
        if subscription is not None:
            subscription.close()

    def tick(self, now: float | None = None) -> bool:
        """Follow the session once; returns whether the robot was redrawn (q changed).

        Scene and gizmos are updated only when the session has a new state or
        accepted a change; the panels at most ``PANEL_HZ`` times a second, and at
        least every ``PANEL_IDLE_PERIOD`` seconds.
        """
        self._follow_model()
        state = self.session.state
        key = (state.seq, self.session.revision)
        redrawn = False
        if key != self._drawn:
            q = np.asarray(state.q)
            with self.server.atomic():
                redrawn = self.renderer.render(q)
                self.gizmos.sync(q)
            self._drawn = key
            self._panels_due = True
            self.panels.record(state)
        now = time.monotonic() if now is None else now
        since = now - self._panels_at
        if (self._panels_due and since >= 1.0 / PANEL_HZ) or since >= PANEL_IDLE_PERIOD:
            self._panels_at = now
            self._panels_due = False
            self.panels.refresh(self.viewers)
        return redrawn

    def _build(self) -> None:
        """The scene of the session's model at its q, gizmos sized from it, the panels."""
        self.renderer = SceneRenderer(self.server, self.session.model)
        self.renderer.render(np.asarray(self.session.state.q))
        bounds = self.renderer.bounds()
        scale = gizmo_scale(*bounds) if bounds is not None else DEFAULT_SCALE
        self.gizmos = TargetGizmos(self.server, self.session, scale=scale)
        self.panels = SessionPanels(
            self.server, self.session, self.link, self.renderer, self.frame, self.takes
        )

    def _follow_model(self) -> None:
        """Build the scene, gizmos and panels again when the session runs a new model."""
        model = self.session.model
        if model is self.renderer.model:
            return
        with self.server.atomic():
            self.server.scene.reset()
            self.server.gui.reset()
            self._build()
        self._drawn = (-1, -1)
        self._panels_due = True

    def _run(self) -> None:
        next_time = time.monotonic()
        while not self._stop.is_set():
            if self.session.closed:
                self.stop()  # stopped with the session
                return
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
        """Stop drawing and shut the viser server down (idempotent)."""
        with self._stop_lock:
            if self._stopped:
                return
            self._stopped = True
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=2.0)
        for subscription in list(self._watching.values()):
            subscription.close()
        self._watching.clear()
        self.server.stop()
