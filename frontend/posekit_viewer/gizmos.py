"""Target gizmos: one viser transform control per draggable task target.

What a task gets follows from its kind's target shape
(:mod:`posekit.sessions.kinds`), not from its type:

- a pose: a 6-DoF gizmo (a pose in a robot frame, the kind's anchor — e.g. a
  relative-frame target in its root — is shown in the world through the anchor's
  current pose);
- a point (look-at points, CoM targets): translation only;
- a direction: a direction handle at the anchor frame's origin — a rotation-only gizmo
  with an arrow along its +z axis, which is the direction.

A drag sends the target to the session through :meth:`Session.set_target`, exactly as
REST and websocket clients do; a rejected target is shown to the viewer who dragged
and the gizmo returns to the session's target once released. Gizmos follow targets
changed elsewhere (REST, other viewers), except one being dragged, which never jumps
under the hand moving it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import viser
from posekit import SE3, SO3, Configuration
from posekit.sessions.kinds import GizmoShape, TaskSpecBase, task_kind
from posekit.sessions.live.session import Session

from posekit_viewer.panel_support import Rejected

logger = logging.getLogger(__name__)

GIZMO_ROOT = "/targets"
ARROW_RGB = (30, 90, 235)
GIZMO_FRACTION = 0.18  # a gizmo's size: this fraction of the robot's largest extent
GIZMO_SIZE_RANGE = (0.05, 1.0)  # [m]
DEFAULT_SCALE = 0.15  # [m] without a robot to measure


def gizmo_scale(low: np.ndarray, high: np.ndarray) -> float:
    """Gizmo size [m] for a robot whose bounding box is ``[low, high]``.

    Like RViz's interactive markers, gizmos are sized from the object they move: a
    fixed fraction of the robot's largest extent, so that they look the same on a
    0.7 m arm and a 1.3 m humanoid once the camera frames the robot (about a fifth of
    the view's height).
    """
    size = GIZMO_FRACTION * float(np.max(np.asarray(high) - np.asarray(low)))
    return float(np.clip(size, *GIZMO_SIZE_RANGE))


def gizmo_shape(spec: TaskSpecBase) -> GizmoShape | None:
    """The gizmo a task gets (None: none), from its kind's target shape."""
    shape = task_kind(spec).target_shape
    return shape.gizmo if shape is not None else None


@dataclass
class _Gizmo:
    task_type: str
    shape: GizmoShape
    anchored: bool  # drawn relative to a robot frame that moves with q
    handle: viser.TransformControlsHandle
    dragging: set[int] = field(default_factory=set)  # ids of the clients dragging it
    last_target: Any = None  # the target the gizmo shows
    pending: tuple[np.ndarray, np.ndarray, Any] | None = None  # latest unsent drag pose
    sending: bool = False  # a drag pose is being sent to the session
    settle: bool = False  # released: show the session's target once sending is done


class TargetGizmos:
    """The gizmos of one session's tasks, kept in sync with its task stack."""

    def __init__(
        self, server: viser.ViserServer, session: Session, scale: float = DEFAULT_SCALE
    ) -> None:
        self._server = server
        self._session = session
        self._scale = scale
        self._gizmos: dict[str, _Gizmo] = {}
        self._lock = threading.RLock()
        self._configuration = Configuration(session.model)  # anchors' poses, at q

    # ------------------------------------------------------------ syncing
    def sync(self, q: np.ndarray) -> None:
        """Create, move or remove gizmos to match the session's tasks at ``q``."""
        specs = {
            spec.name: spec
            for spec in self._session.tasks()
            if spec.name is not None and gizmo_shape(spec) is not None
        }
        posed = False
        with self._lock:
            for name in list(self._gizmos):
                if name not in specs or specs[name].type != self._gizmos[name].task_type:
                    self._gizmos.pop(name).handle.remove()
            for name, spec in specs.items():
                if spec.target is None:
                    continue
                gizmo = self._gizmos.get(name)
                if gizmo is None:
                    gizmo = self._gizmos[name] = self._create(name, spec)
                if gizmo.dragging:
                    continue
                if spec.target == gizmo.last_target and not gizmo.anchored:
                    continue
                if gizmo.anchored and not posed:
                    self._configuration.update(q)
                    posed = True
                self._place(gizmo, spec)

    def _place(self, gizmo: _Gizmo, spec: TaskSpecBase) -> None:
        """Show ``spec``'s target (anchors posed at the configuration's q)."""
        position, wxyz = self._world_pose(gizmo.shape, spec)
        with self._server.atomic():
            gizmo.handle.position = position
            gizmo.handle.wxyz = wxyz
        gizmo.last_target = spec.target

    def _anchor_pose(self, spec: TaskSpecBase) -> SE3 | None:
        anchor = task_kind(spec).gizmo_anchor(spec)
        if anchor is None:
            return None
        return self._configuration.get_transform_frame_to_world(*anchor)

    def _world_pose(self, shape: GizmoShape, spec: TaskSpecBase) -> tuple[np.ndarray, np.ndarray]:
        target = spec.target
        assert target is not None
        anchor = self._anchor_pose(spec)
        if shape == "direction":
            assert anchor is not None and target.direction is not None
            return anchor.translation(), rotation_to_z(np.array(target.direction))
        position = np.array(target.position)
        if shape == "point":
            return position, np.array([1.0, 0.0, 0.0, 0.0])
        pose = SE3.from_rotation_and_translation(SO3(np.array(target.wxyz)), position)
        world = pose if anchor is None else anchor @ pose
        return world.translation(), world.rotation().wxyz

    def _create(self, name: str, spec: TaskSpecBase) -> _Gizmo:
        shape = gizmo_shape(spec)
        assert shape is not None
        options: dict[str, Any] = {}
        if shape == "point":
            options = {"disable_rotations": True}
        elif shape == "direction":
            options = {"disable_axes": True, "disable_sliders": True}
        path = f"{GIZMO_ROOT}/{name}"
        handle = self._server.scene.add_transform_controls(
            path, scale=self._scale, depth_test=False, **options
        )
        if shape == "direction":
            length = 1.6 * self._scale
            self._server.scene.add_arrows(
                f"{path}/direction", points=np.array([[[0.0, 0.0, 0.0], [0.0, 0.0, length]]]),
                colors=ARROW_RGB, shaft_radius=0.05 * self._scale, head_radius=0.12 * self._scale,
                head_length=0.3 * self._scale,
            )  # fmt: skip
        anchored = task_kind(spec).gizmo_anchor(spec) is not None
        gizmo = _Gizmo(spec.type, shape, anchored, handle)

        @handle.on_update
        async def _(event: Any) -> None:
            await self._on_gizmo_event(name, gizmo, event)

        return gizmo

    # ------------------------------------------------------------- sending
    async def _on_gizmo_event(self, name: str, gizmo: _Gizmo, event: Any) -> None:
        """A browser grabbed, moved or released a gizmo.

        Runs on viser's event loop in message order, so drag phases and poses are read
        in order; the session is updated off the loop, the latest pose winning, one update
        at a time per gizmo. On release the gizmo shows the session's target (the
        dragged one, or whatever a REST client or another viewer set meanwhile).
        """
        phase = getattr(event, "phase", "update")
        client_id: int = getattr(event, "client_id", -1)
        if phase == "start":
            gizmo.dragging.add(client_id)
            return
        if phase == "end":
            gizmo.dragging.discard(client_id)
            gizmo.settle = True
        else:
            pose = (np.array(gizmo.handle.position, float), np.array(gizmo.handle.wxyz, float))
            gizmo.pending = (*pose, getattr(event, "client", None))
        if gizmo.sending:
            return  # the loop below, already running, picks this up
        gizmo.sending = True
        try:
            while gizmo.pending is not None or gizmo.settle:
                if gizmo.pending is not None:
                    position, wxyz, client = gizmo.pending
                    gizmo.pending = None
                    await asyncio.to_thread(self.apply_drag, name, position, wxyz, client)
                else:
                    gizmo.settle = False
                    await asyncio.to_thread(self.restore, name)
        finally:
            gizmo.sending = False

    def apply_drag(
        self, name: str, position: np.ndarray, wxyz: np.ndarray, client: Any = None
    ) -> bool:
        """Send the target the gizmo of task ``name`` shows at this pose (world frame).

        Returns whether the session accepted it. A rejection is shown to ``client``,
        and the gizmo goes back to the session's target when nobody drags it.
        """
        gizmo = self._gizmos.get(name)
        if gizmo is None:
            return False
        try:
            target = self.target_from_gizmo(name, position, wxyz)
            canonical = self._session.set_target(name, target)
        except Rejected as error:
            logger.info("gizmo %s rejected: %s", name, error)
            if client is not None:
                client.add_notification("Target rejected", str(error), color="red")
            if not gizmo.dragging:
                self.restore(name)
            return False
        gizmo.last_target = canonical
        return True

    def restore(self, name: str) -> None:
        """Put a gizmo back at its task's target in the session's current configuration."""
        with self._lock:
            gizmo = self._gizmos.get(name)
            if gizmo is None or gizmo.dragging:
                return
            spec = self._session.task(name)
            if spec.target is not None:
                self._configuration.update(self._session.q)
                self._place(gizmo, spec)

    def target_from_gizmo(
        self, name: str, position: np.ndarray, wxyz: np.ndarray
    ) -> dict[str, list[float]]:
        """The task target that puts the task where the gizmo is (world pose)."""
        spec = self._session.task(name)
        shape = gizmo_shape(spec)
        if shape == "point":
            return {"position": position.tolist()}
        if shape == "direction":
            direction = SO3(wxyz).as_matrix()[:, 2]
            return {"direction": direction.tolist()}
        world = SE3.from_rotation_and_translation(SO3(wxyz), position)
        with self._lock:
            if task_kind(spec).gizmo_anchor(spec) is not None:
                self._configuration.update(self._session.q)
            anchor = self._anchor_pose(spec)
        local = world if anchor is None else anchor.inverse() @ world
        return {"position": local.translation().tolist(), "wxyz": local.rotation().wxyz.tolist()}

    # ------------------------------------------------------------- reading
    @property
    def scale(self) -> float:
        """Size of the gizmos [m]."""
        return self._scale

    def positions(self) -> np.ndarray:
        """World positions of the gizmos as shown, shape (n, 3)."""
        with self._lock:
            points = [np.asarray(g.handle.position, float) for g in self._gizmos.values()]
        return np.array(points).reshape(-1, 3)

    @property
    def names(self) -> list[str]:
        """Names of the tasks that have a gizmo."""
        return list(self._gizmos)

    def handle(self, name: str) -> viser.TransformControlsHandle:
        """The transform control of a task's gizmo."""
        return self._gizmos[name].handle

    def dragging(self, name: str) -> bool:
        """Whether some viewer is dragging the gizmo of task ``name``."""
        return bool(self._gizmos[name].dragging)

    def remove_all(self) -> None:
        """Remove every gizmo from the scene."""
        with self._lock:
            for gizmo in self._gizmos.values():
                gizmo.handle.remove()
            self._gizmos.clear()


def rotation_to_z(direction: np.ndarray) -> np.ndarray:
    """A ``wxyz`` rotation whose +z axis is the unit vector ``direction``."""
    unit = direction / np.linalg.norm(direction)
    z = np.array([0.0, 0.0, 1.0])
    axis = np.cross(z, unit)
    sine = float(np.linalg.norm(axis))
    cosine = float(z @ unit)
    if sine < 1e-9:
        return np.array([1.0, 0.0, 0.0, 0.0]) if cosine > 0 else np.array([0.0, 1.0, 0.0, 0.0])
    angle = np.arctan2(sine, cosine)
    return SO3.exp(axis / sine * angle).wxyz
