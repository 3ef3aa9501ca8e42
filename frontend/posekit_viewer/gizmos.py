"""Target gizmos: one viser transform control per draggable task target.

- frame and relative-frame targets: a 6-DoF gizmo (relative targets are shown in the
  world through the root frame's current pose);
- look-at points and CoM targets: translation only;
- axis-align directions: a direction handle at the frame's origin — a rotation-only
  gizmo with an arrow along its +z axis, which is the direction.

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

import mujoco
import numpy as np
import viser
from posekit import SE3, SO3
from posekit.sessions.session import Session

from posekit_viewer.panel_support import Rejected

logger = logging.getLogger(__name__)

POSE_TYPES = ("frame", "relative_frame")
POINT_TYPES = ("look_at", "com")
DIRECTION_TYPES = ("axis_align",)
GIZMO_TYPES = POSE_TYPES + POINT_TYPES + DIRECTION_TYPES
Q_DEPENDENT = ("relative_frame", "axis_align")  # drawn relative to a moving frame
GIZMO_ROOT = "/targets"
ARROW_RGB = (30, 90, 235)


@dataclass
class _Gizmo:
    task_type: str
    handle: viser.TransformControlsHandle
    dragging: set[int] = field(default_factory=set)  # ids of the clients dragging it
    last_target: Any = None  # the target the gizmo shows
    pending: tuple[np.ndarray, np.ndarray, Any] | None = None  # latest unsent drag pose
    sending: bool = False  # a drag pose is being sent to the session
    settle: bool = False  # released: show the session's target once sending is done


def frame_pose(model: mujoco.MjModel, data: mujoco.MjData, name: str, kind: str) -> SE3:
    """World pose of a named body, geom or site in ``data`` (kinematics up to date)."""
    obj = {"body": mujoco.mjtObj.mjOBJ_BODY, "geom": mujoco.mjtObj.mjOBJ_GEOM,
           "site": mujoco.mjtObj.mjOBJ_SITE}[kind]  # fmt: skip
    index = mujoco.mj_name2id(model, obj, name)
    position = {"body": data.xpos, "geom": data.geom_xpos, "site": data.site_xpos}[kind][index]
    matrix = {"body": data.xmat, "geom": data.geom_xmat, "site": data.site_xmat}[kind][index]
    rotation = SO3.from_matrix(matrix.reshape(3, 3))
    return SE3.from_rotation_and_translation(rotation, position.copy())


class TargetGizmos:
    """The gizmos of one session's tasks, kept in sync with its task stack."""

    def __init__(self, server: viser.ViserServer, session: Session, scale: float = 0.15) -> None:
        self._server = server
        self._session = session
        self._scale = scale
        self._gizmos: dict[str, _Gizmo] = {}
        self._lock = threading.RLock()

    # ------------------------------------------------------------ syncing
    def sync(self, data: mujoco.MjData) -> None:
        """Create, move or remove gizmos to match the session's tasks at ``data``'s pose."""
        specs = {spec.name: spec for spec in self._session.tasks() if spec.type in GIZMO_TYPES}
        with self._lock:
            for name in list(self._gizmos):
                if name not in specs or specs[name].type != self._gizmos[name].task_type:
                    self._gizmos.pop(name).handle.remove()
            for name, spec in specs.items():
                if spec.target is None:
                    continue
                gizmo = self._gizmos.get(name)
                if gizmo is None:
                    gizmo = self._create(name, spec.type)
                    self._gizmos[name] = gizmo
                if gizmo.dragging:
                    continue
                if spec.target == gizmo.last_target and spec.type not in Q_DEPENDENT:
                    continue
                self._place(gizmo, spec, data)

    def _place(self, gizmo: _Gizmo, spec: Any, data: mujoco.MjData) -> None:
        position, wxyz = self._world_pose(spec, data)
        with self._server.atomic():
            gizmo.handle.position = position
            gizmo.handle.wxyz = wxyz
        gizmo.last_target = spec.target

    def _world_pose(self, spec: Any, data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray]:
        model = self._session.model
        target = spec.target
        if spec.type == "frame":
            return np.array(target.position), np.array(target.wxyz)
        if spec.type == "relative_frame":
            root = frame_pose(model, data, spec.params.root, spec.params.root_type)
            local = SE3.from_rotation_and_translation(
                SO3(np.array(target.wxyz)), np.array(target.position)
            )
            world = root @ local
            return world.translation(), world.rotation().wxyz
        if spec.type in POINT_TYPES:
            return np.array(target.position), np.array([1.0, 0.0, 0.0, 0.0])
        frame = frame_pose(model, data, spec.params.frame, spec.params.frame_type)
        return frame.translation(), rotation_to_z(np.array(target.direction))

    def _create(self, name: str, task_type: str) -> _Gizmo:
        options: dict[str, Any] = {}
        if task_type in POINT_TYPES:
            options = {"disable_rotations": True}
        elif task_type in DIRECTION_TYPES:
            options = {"disable_axes": True, "disable_sliders": True}
        path = f"{GIZMO_ROOT}/{name}"
        handle = self._server.scene.add_transform_controls(
            path, scale=self._scale, depth_test=False, **options
        )
        if task_type in DIRECTION_TYPES:
            length = 1.6 * self._scale
            self._server.scene.add_arrows(
                f"{path}/direction", points=np.array([[[0.0, 0.0, 0.0], [0.0, 0.0, length]]]),
                colors=ARROW_RGB, shaft_radius=0.05 * self._scale, head_radius=0.12 * self._scale,
                head_length=0.3 * self._scale,
            )  # fmt: skip
        gizmo = _Gizmo(task_type, handle)

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
        client_id = getattr(event, "client_id", None)
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
            target = self.target_from_gizmo(name, gizmo.task_type, position, wxyz)
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
                self._place(gizmo, spec, self._kinematics())

    def _kinematics(self) -> mujoco.MjData:
        data = mujoco.MjData(self._session.model)
        data.qpos[:] = self._session.q
        mujoco.mj_kinematics(self._session.model, data)
        return data

    def target_from_gizmo(
        self, name: str, task_type: str, position: np.ndarray, wxyz: np.ndarray
    ) -> dict[str, list[float]]:
        """The task target that puts the task where the gizmo is (world pose)."""
        if task_type == "frame":
            return {"position": position.tolist(), "wxyz": wxyz.tolist()}
        if task_type in POINT_TYPES:
            return {"position": position.tolist()}
        if task_type in DIRECTION_TYPES:
            direction = SO3(wxyz).as_matrix()[:, 2]
            return {"direction": direction.tolist()}
        spec = self._session.task(name)
        data = self._kinematics()
        root = frame_pose(self._session.model, data, spec.params.root, spec.params.root_type)
        world = SE3.from_rotation_and_translation(SO3(wxyz), position)
        local = root.inverse() @ world
        return {"position": local.translation().tolist(), "wxyz": local.rotation().wxyz.tolist()}

    # ------------------------------------------------------------- reading
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
