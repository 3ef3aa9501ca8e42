"""MuJoCo geoms to triangle meshes: one merged, vertex-coloured mesh per body and group.

Every geom type the viewer draws becomes a :class:`trimesh.Trimesh` in its body's
frame (MuJoCo's ``geom_pos``/``geom_quat``), coloured with its material or geom RGBA:
meshes from the model's vertex and face buffers; boxes, spheres, capsules, cylinders
and ellipsoids from trimesh primitives (half-sizes as MuJoCo defines them); planes as
a thin finite slab. Lengths are in meters. Visual geoms are those of groups 0-2 that
are not fully transparent; collision geoms are those with ``contype`` or
``conaffinity`` set.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
import trimesh

from posekit_viewer.camera_framing import box_corners

VISUAL_GROUPS = (0, 1, 2)
PLANE_HALF_SIZE = 2.0  # [m] drawn half-size of an infinite plane (size 0)
PLANE_THICKNESS = 0.002  # [m]


@dataclass
class BodyMesh:
    """The merged mesh of one body's geoms, in the body frame."""

    body_id: int
    name: str
    mesh: trimesh.Trimesh
    static: bool  # welded to the world: its pose never changes
    mocap: bool = False  # a mocap body: scene decoration, its pose independent of q

    def corners(self) -> np.ndarray:
        """The 8 corners of the mesh's axis-aligned bounding box in the body frame, (8, 3)."""
        low, high = self.mesh.bounds
        return box_corners(low, high)


def geom_rgba(model: mujoco.MjModel, geom_id: int) -> np.ndarray:
    """RGBA in [0, 1] of a geom: its material's when it has one, else its own."""
    material = model.geom_matid[geom_id]
    rgba = model.mat_rgba[material] if material >= 0 else model.geom_rgba[geom_id]
    return np.asarray(rgba, dtype=float)


def geom_trimesh(model: mujoco.MjModel, geom_id: int) -> trimesh.Trimesh | None:
    """The geom as a mesh in its own frame, or None for types the viewer does not draw."""
    kind = int(model.geom_type[geom_id])
    size = model.geom_size[geom_id]
    geom = mujoco.mjtGeom
    if kind == int(geom.mjGEOM_SPHERE):
        return trimesh.creation.icosphere(subdivisions=2, radius=size[0])
    if kind == int(geom.mjGEOM_ELLIPSOID):
        mesh = trimesh.creation.icosphere(subdivisions=2, radius=1.0)
        mesh.apply_scale(size[:3])
        return mesh
    if kind == int(geom.mjGEOM_CAPSULE):
        return trimesh.creation.capsule(height=2.0 * size[1], radius=size[0], count=(16, 16))
    if kind == int(geom.mjGEOM_CYLINDER):
        return trimesh.creation.cylinder(radius=size[0], height=2.0 * size[1], sections=24)
    if kind == int(geom.mjGEOM_BOX):
        return trimesh.creation.box(extents=2.0 * size[:3])
    if kind == int(geom.mjGEOM_PLANE):
        half_x = size[0] if size[0] > 0 else PLANE_HALF_SIZE
        half_y = size[1] if size[1] > 0 else PLANE_HALF_SIZE
        slab = trimesh.creation.box(extents=(2.0 * half_x, 2.0 * half_y, PLANE_THICKNESS))
        slab.apply_translation((0.0, 0.0, -PLANE_THICKNESS / 2.0))
        return slab
    if kind == int(geom.mjGEOM_MESH):
        mesh_id = model.geom_dataid[geom_id]
        start, count = model.mesh_vertadr[mesh_id], model.mesh_vertnum[mesh_id]
        face_start, face_count = model.mesh_faceadr[mesh_id], model.mesh_facenum[mesh_id]
        vertices = model.mesh_vert[start : start + count]
        faces = model.mesh_face[face_start : face_start + face_count]
        return trimesh.Trimesh(vertices=vertices.copy(), faces=faces.copy(), process=False)
    return None


def geom_in_body(model: mujoco.MjModel, geom_id: int) -> trimesh.Trimesh | None:
    """The geom's coloured mesh placed in its body's frame."""
    mesh = geom_trimesh(model, geom_id)
    if mesh is None:
        return None
    transform = np.eye(4)
    rotation = np.empty(9)
    mujoco.mju_quat2Mat(rotation, model.geom_quat[geom_id])
    transform[:3, :3] = rotation.reshape(3, 3)
    transform[:3, 3] = model.geom_pos[geom_id]
    mesh.apply_transform(transform)
    colour = np.clip(np.round(geom_rgba(model, geom_id) * 255), 0, 255).astype(np.uint8)
    mesh.visual = trimesh.visual.ColorVisuals(
        mesh, vertex_colors=np.tile(colour, (len(mesh.vertices), 1))
    )
    return mesh


def is_plane(model: mujoco.MjModel, geom_id: int) -> bool:
    """Whether the geom is an (infinite) plane, such as a floor."""
    return int(model.geom_type[geom_id]) == int(mujoco.mjtGeom.mjGEOM_PLANE)


def visual_geoms(
    model: mujoco.MjModel, groups: tuple[int, ...] = VISUAL_GROUPS, include_planes: bool = False
) -> list[int]:
    """Ids of the geoms drawn as the robot: in ``groups`` and not fully transparent."""
    return [
        geom_id
        for geom_id in range(model.ngeom)
        if int(model.geom_group[geom_id]) in groups
        and geom_rgba(model, geom_id)[3] > 0.0
        and (include_planes or not is_plane(model, geom_id))
    ]


def collision_geoms(model: mujoco.MjModel) -> list[int]:
    """Ids of the geoms that take part in collisions (contype or conaffinity set), planes aside.

    Menagerie robots keep these in group 3, apart from their visual meshes; simpler
    models collide with the geoms they are drawn with.
    """
    return [
        geom_id
        for geom_id in range(model.ngeom)
        if (int(model.geom_contype[geom_id]) or int(model.geom_conaffinity[geom_id]))
        and not is_plane(model, geom_id)
    ]


def merge_by_body(model: mujoco.MjModel, geom_ids: list[int]) -> list[BodyMesh]:
    """One merged, coloured mesh per body holding some of ``geom_ids``, in the body frame."""
    per_body: dict[int, list[trimesh.Trimesh]] = {}
    for geom_id in geom_ids:
        mesh = geom_in_body(model, geom_id)
        if mesh is not None:
            per_body.setdefault(int(model.geom_bodyid[geom_id]), []).append(mesh)
    result = []
    for body_id, meshes in sorted(per_body.items()):
        merged = meshes[0] if len(meshes) == 1 else trimesh.util.concatenate(meshes)
        assert isinstance(merged, trimesh.Trimesh)
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, body_id) or f"body{body_id}"
        mocap = int(model.body_mocapid[body_id]) >= 0
        static = int(model.body_weldid[body_id]) == 0 and not mocap
        result.append(BodyMesh(body_id, name, merged, static, mocap))
    return result


def body_meshes(
    model: mujoco.MjModel, groups: tuple[int, ...] = VISUAL_GROUPS, include_planes: bool = False
) -> list[BodyMesh]:
    """One merged mesh per body that has drawable geoms in ``groups`` (transparent ones skipped)."""
    return merge_by_body(model, visual_geoms(model, groups, include_planes))


def collision_meshes(model: mujoco.MjModel) -> list[BodyMesh]:
    """One merged mesh per body of its collision geoms (see :func:`collision_geoms`)."""
    return merge_by_body(model, collision_geoms(model))
