"""Draw a MuJoCo model in a viser scene and move its bodies to a configuration.

Geometry is uploaded once (one mesh node per body, plus hidden collision meshes),
bodies welded to the world at their fixed pose;
each :meth:`SceneRenderer.render` runs forward kinematics on the renderer's own
``MjData`` and writes the moving bodies' poses in a single ``server.atomic()`` block,
only when ``q`` changed.

A scene's mocap bodies (e.g. the target markers of Menagerie's G1 scene) do not move
with ``q`` and are not the session's targets: they are drawn once, muted and
translucent under ``/scene_mocap`` (never with a gizmo), and can be hidden.
:meth:`SceneRenderer.bounds` is the robot's bounding box at the drawn ``q``, mocap
bodies left out.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import mujoco
import numpy as np
import viser

from posekit_viewer.mjcf_scene import BodyMesh, body_meshes, collision_meshes

COLLISION_RGBA = (0.9, 0.3, 0.2, 0.35)
MOCAP_RGB = (150, 150, 150)  # scene mocap bodies: grey and translucent, unlike targets
MOCAP_OPACITY = 0.3
MOCAP_ROOT = "/scene_mocap"
POSE_TOLERANCE = 1e-7  # [m] and quaternion units: smaller moves are not sent
ROBOT_ROOT_BODY = 1  # the CoM marker shows subtree_com of this body, as ComTask uses


class SceneRenderer:
    """The robot of ``model`` under ``root`` in ``server``'s scene, with a ground grid."""

    def __init__(
        self,
        server: viser.ViserServer,
        model: mujoco.MjModel,
        *,
        root: str = "/robot",
        show_collision: bool = False,
    ) -> None:
        self.server = server
        self.model = model
        self.data = mujoco.MjData(model)
        self._lock = threading.Lock()  # render thread vs. display switches (GUI threads)
        self._last_q: np.ndarray | None = None
        self.grid = server.scene.add_grid(
            "/grid", width=4.0, height=4.0, cell_size=0.1, section_size=1.0
        )
        self._moving: list[tuple[int, viser.SceneNodeHandle]] = []
        self._static: list[tuple[int, viser.SceneNodeHandle]] = []
        self._mocap: list[tuple[int, viser.SceneNodeHandle]] = []
        self._collision: list[tuple[int, viser.SceneNodeHandle]] = []
        robot_meshes = []
        mujoco.mj_kinematics(model, self.data)  # at qpos0: the poses of static bodies
        with server.atomic():
            for body in body_meshes(model):
                if body.mocap:
                    self._mocap.append((body.body_id, self._add_mocap(body)))
                    continue
                robot_meshes.append(body)
                handle = self._add(f"{root}/visual/{body.name}", body)
                (self._static if body.static else self._moving).append((body.body_id, handle))
            collision_colour = np.round(np.array(COLLISION_RGBA) * 255).astype(np.uint8)
            for body in collision_meshes(model):
                visual: Any = body.mesh.visual  # colour visuals: the meshes have no texture
                visual.vertex_colors = collision_colour
                handle = self._add(f"{root}/collision/{body.name}", body, visible=show_collision)
                self._collision.append((body.body_id, handle))
        self._frames = [
            (body_id, server.scene.add_frame(f"{root}/frames/{body_id}", axes_length=0.08,
                                             axes_radius=0.004, visible=False))
            for body_id in range(1, model.nbody)
        ]  # fmt: skip
        self._com = server.scene.add_icosphere(
            "/com", radius=0.025, color=(240, 180, 20), visible=False
        )
        self._indices = np.array([body_id for body_id, _ in self._moving], dtype=int)
        self._sent_positions = np.full((len(self._moving), 3), np.inf)
        self._sent_rotations = np.full((len(self._moving), 4), np.inf)
        self._collision_visible = show_collision
        self._frames_visible = False
        # Bounding-box corners of the robot's body meshes, in their bodies' frames.
        self._corner_bodies = np.repeat([body.body_id for body in robot_meshes], 8)
        self._corners = np.concatenate([b.corners() for b in robot_meshes] or [np.zeros((0, 3))])

    def _add(self, name: str, body: BodyMesh, visible: bool = True) -> viser.SceneNodeHandle:
        """Upload a body's mesh once, at the body's current pose."""
        return self.server.scene.add_mesh_trimesh(
            name, body.mesh, position=self.data.xpos[body.body_id].copy(),
            wxyz=self.data.xquat[body.body_id].copy(), visible=visible,
        )  # fmt: skip

    def _add_mocap(self, body: BodyMesh) -> viser.SceneNodeHandle:
        """Upload a mocap body's mesh once, muted, at its fixed pose."""
        return self.server.scene.add_mesh_simple(
            f"{MOCAP_ROOT}/{body.name}", np.asarray(body.mesh.vertices, np.float32),
            np.asarray(body.mesh.faces, np.uint32), color=MOCAP_RGB, opacity=MOCAP_OPACITY,
            position=self.data.xpos[body.body_id].copy(),
            wxyz=self.data.xquat[body.body_id].copy(), cast_shadow=False, receive_shadow=False,
        )  # fmt: skip

    def _place(self, handles: Sequence[tuple[int, viser.SceneNodeHandle]]) -> None:
        for body_id, handle in handles:
            handle.position = self.data.xpos[body_id]
            handle.wxyz = self.data.xquat[body_id]

    @property
    def body_handles(self) -> dict[int, viser.SceneNodeHandle]:
        """Scene handles of the bodies that move, by body id."""
        return dict(self._moving)

    @property
    def static_handles(self) -> dict[int, viser.SceneNodeHandle]:
        """Scene handles of the bodies welded to the world (placed once), by body id."""
        return dict(self._static)

    @property
    def mocap_handles(self) -> dict[int, viser.SceneNodeHandle]:
        """Scene handles of the scene's mocap bodies (drawn muted, placed once), by body id."""
        return dict(self._mocap)

    @property
    def collision_handles(self) -> dict[int, viser.SceneNodeHandle]:
        """Scene handles of the collision meshes, by body id."""
        return dict(self._collision)

    @property
    def frame_handles(self) -> dict[int, viser.SceneNodeHandle]:
        """Scene handles of the body frames, by body id."""
        return dict(self._frames)

    @property
    def com_handle(self) -> viser.SceneNodeHandle:
        """Scene handle of the center-of-mass marker."""
        return self._com

    def set_collision_visible(self, visible: bool) -> None:
        """Show or hide the collision geoms."""
        with self._lock, self.server.atomic():
            self._collision_visible = visible
            self._place(self._collision)
            for _, handle in self._collision:
                handle.visible = visible

    def set_frames_visible(self, visible: bool) -> None:
        """Show or hide every body's coordinate frame."""
        with self._lock, self.server.atomic():
            self._frames_visible = visible
            self._place(self._frames)
            for _, handle in self._frames:
                handle.visible = visible

    def set_mocap_visible(self, visible: bool) -> None:
        """Show or hide the scene's mocap bodies."""
        with self._lock, self.server.atomic():
            for _, handle in self._mocap:
                handle.visible = visible

    def bounds(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The robot's axis-aligned bounding box ``(low, high)`` [m] at the drawn ``q``.

        Built from each body mesh's box corners placed at the body's pose (visual geoms,
        floors and mocap bodies left out); None when the model draws nothing.
        """
        with self._lock:
            if not len(self._corners):
                return None
            ids = self._corner_bodies
            rotations = self.data.xmat[ids].reshape(-1, 3, 3)
            world = self.data.xpos[ids] + np.einsum("nij,nj->ni", rotations, self._corners)
        return world.min(axis=0), world.max(axis=0)

    def set_com_visible(self, visible: bool) -> None:
        """Show or hide the center-of-mass marker (placed at the robot's current CoM)."""
        with self._lock, self.server.atomic():
            if visible:
                self._place_com()
            self._com.visible = visible

    def _place_com(self) -> None:
        mujoco.mj_comPos(self.model, self.data)
        root = ROBOT_ROOT_BODY if self.model.nbody > 1 else 0
        self._com.position = self.data.subtree_com[root].copy()

    def render(self, q: np.ndarray) -> bool:
        """Move the bodies to configuration ``q`` (size nq); False when ``q`` is unchanged.

        Runs forward kinematics on :attr:`data` (left at ``q``) and writes the poses of
        the bodies that moved, plus the visible optional layers, in one atomic update.
        """
        q = np.asarray(q, dtype=float)
        with self._lock:
            if self._last_q is not None and np.array_equal(q, self._last_q):
                return False
            self._last_q = q.copy()
            data = self.data
            data.qpos[:] = q
            mujoco.mj_kinematics(self.model, data)
            positions = data.xpos[self._indices]
            rotations = data.xquat[self._indices]
            # Viser compares every assigned pose with the last one (costly): assign only
            # the bodies that moved, found with one vectorised comparison.
            moved = np.flatnonzero(
                (np.abs(positions - self._sent_positions) > POSE_TOLERANCE).any(axis=1)
                | (np.abs(rotations - self._sent_rotations) > POSE_TOLERANCE).any(axis=1)
            )
            self._sent_positions[moved] = positions[moved]
            self._sent_rotations[moved] = rotations[moved]
            with self.server.atomic():
                for index in moved.tolist():
                    _send_pose(self._moving[index][1], positions[index], rotations[index])
                if self._collision_visible:
                    self._place(self._collision)
                if self._frames_visible:
                    self._place(self._frames)
                if self._com.visible:
                    self._place_com()
            return True


def _send_pose(handle: viser.SceneNodeHandle, position: np.ndarray, wxyz: np.ndarray) -> None:
    """Assign a node's pose (the caller sends only bodies that moved)."""
    handle.position = position
    handle.wxyz = wxyz
