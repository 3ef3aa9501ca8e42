"""MJCF-to-scene conversion and the scene renderer, on built-in and Menagerie robots."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
import viser
from posekit_viewer.mjcf_scene import (
    VISUAL_GROUPS,
    body_meshes,
    collision_geoms,
    collision_meshes,
    geom_in_body,
    geom_rgba,
)
from posekit_viewer.scene_renderer import SceneRenderer
from support.models import builtin_model, menagerie_model, random_configuration
from support.viewers import MessageLog

PRIMITIVES_XML = """
<mujoco><compiler angle="radian"/><worldbody>
  <body name="b"><joint type="hinge"/>
    <geom name="box" type="box" size="0.1 0.2 0.3" pos="1 0 0" rgba="1 0 0 1"/>
    <geom name="sphere" type="sphere" size="0.2" pos="0 2 0"/>
    <geom name="capsule" type="capsule" size="0.05 0.3" pos="0 0 3"/>
    <geom name="cylinder" type="cylinder" size="0.1 0.2" pos="0 0 -3"/>
    <geom name="ellipsoid" type="ellipsoid" size="0.1 0.2 0.3" pos="-2 0 0"/>
    <geom name="hidden" type="sphere" size="0.1" rgba="1 1 1 0"/>
    <geom name="collision" type="sphere" size="0.1" group="3"/>
  </body>
  <geom name="plane" type="plane" size="0.5 0.25 0.1" group="2"/>
</worldbody></mujoco>
"""


def _geom_extent(model: mujoco.MjModel, name: str) -> np.ndarray:
    mesh = geom_in_body(model, model.geom(name).id)
    assert mesh is not None
    return mesh.bounds[1] - mesh.bounds[0]


def test_primitives_have_their_mujoco_sizes() -> None:
    model = mujoco.MjModel.from_xml_string(PRIMITIVES_XML)
    np.testing.assert_allclose(_geom_extent(model, "box"), [0.2, 0.4, 0.6], atol=1e-9)
    np.testing.assert_allclose(_geom_extent(model, "sphere"), [0.4, 0.4, 0.4], atol=0.02)
    np.testing.assert_allclose(_geom_extent(model, "capsule"), [0.1, 0.1, 0.7], atol=0.01)
    np.testing.assert_allclose(_geom_extent(model, "cylinder"), [0.2, 0.2, 0.4], atol=0.01)
    np.testing.assert_allclose(_geom_extent(model, "ellipsoid"), [0.2, 0.4, 0.6], atol=0.02)
    np.testing.assert_allclose(_geom_extent(model, "plane"), [1.0, 0.5, 0.002], atol=1e-9)
    box = geom_in_body(model, model.geom("box").id)
    np.testing.assert_allclose(box.bounds.mean(axis=0), [1.0, 0.0, 0.0], atol=1e-9)
    np.testing.assert_array_equal(box.visual.vertex_colors[0], [255, 0, 0, 255])


def test_transparent_and_collision_geoms_are_not_visual() -> None:
    model = mujoco.MjModel.from_xml_string(PRIMITIVES_XML)
    (body,) = body_meshes(model)
    expected = sum(
        len(geom_in_body(model, model.geom(name).id).vertices)
        for name in ("box", "sphere", "capsule", "cylinder", "ellipsoid")
    )
    assert len(body.mesh.vertices) == expected
    (group3,) = body_meshes(model, groups=(3,))
    assert len(group3.mesh.vertices) == len(
        geom_in_body(model, model.geom("collision").id).vertices
    )
    # Collision geoms are those that collide (contype/conaffinity), whatever their group;
    # planes (floors) are left out of both layers.
    assert model.geom("plane").id not in collision_geoms(model)
    assert model.geom("hidden").id in collision_geoms(model)
    (collision,) = collision_meshes(model)
    assert len(collision.mesh.vertices) == sum(
        len(geom_in_body(model, g).vertices) for g in collision_geoms(model)
    )


@pytest.mark.parametrize(
    "load",
    [
        lambda: builtin_model("arm7"),
        lambda: builtin_model("humanoid"),
        lambda: menagerie_model("ur5e"),
        lambda: menagerie_model("g1"),
        lambda: menagerie_model("panda"),
    ],
    ids=["arm7", "humanoid", "ur5e", "g1", "panda"],
)
def test_every_body_with_visual_geoms_gets_a_mesh(load: object) -> None:
    model = load()  # type: ignore[operator]
    meshes = {body.body_id: body for body in body_meshes(model)}
    for geom_id in range(model.ngeom):
        drawn = (
            int(model.geom_group[geom_id]) in VISUAL_GROUPS
            and model.geom_rgba[geom_id][3] > 0
            and int(model.geom_type[geom_id]) != int(mujoco.mjtGeom.mjGEOM_PLANE)
        )
        if drawn:
            assert int(model.geom_bodyid[geom_id]) in meshes
    assert all(len(body.mesh.faces) > 0 for body in meshes.values())
    # Mesh geoms keep MuJoCo's vertices: each body's mesh spans its geoms' bounding boxes.
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    for body in meshes.values():
        rotation = data.xmat[body.body_id].reshape(3, 3)
        world = body.mesh.vertices @ rotation.T + data.xpos[body.body_id]
        for geom_id in np.flatnonzero(model.geom_bodyid == body.body_id):
            if (
                int(model.geom_group[geom_id]) not in VISUAL_GROUPS
                or model.geom_rgba[geom_id][3] <= 0
            ):
                continue
            center = data.geom_xpos[geom_id]
            assert (
                np.min(np.linalg.norm(world - center, axis=1)) <= model.geom_rbound[geom_id] + 1e-6
            )


@pytest.fixture
def server() -> viser.ViserServer:
    server = viser.ViserServer(host="127.0.0.1", port=0, verbose=False)
    yield server
    server.stop()


def test_renderer_writes_poses_only_when_q_changes(server: viser.ViserServer) -> None:
    model = builtin_model("humanoid")
    renderer = SceneRenderer(server, model)
    q = model.key_qpos[0].copy()
    assert renderer.render(q)
    assert not renderer.render(q.copy())
    q = random_configuration(model, np.random.default_rng(0))
    assert renderer.render(q)
    data = mujoco.MjData(model)
    data.qpos[:] = q
    mujoco.mj_kinematics(model, data)
    handles = renderer.body_handles
    assert len(handles) == model.nbody - 1  # every body but the world moves
    for body_id, handle in handles.items():
        np.testing.assert_allclose(handle.position, data.xpos[body_id], atol=1e-6)
        np.testing.assert_allclose(np.abs(np.dot(handle.wxyz, data.xquat[body_id])), 1.0, atol=1e-6)


@pytest.mark.parametrize("name", ["panda", "g1"])
def test_menagerie_meshes_keep_their_vertices_and_colours(name: str) -> None:
    model = menagerie_model(name)
    mesh_geoms = [
        g
        for g in range(model.ngeom)
        if int(model.geom_type[g]) == int(mujoco.mjtGeom.mjGEOM_MESH)
        and int(model.geom_group[g]) in VISUAL_GROUPS
    ]
    assert len(mesh_geoms) > 10
    colours = set()
    for geom_id in mesh_geoms:
        mesh = geom_in_body(model, geom_id)
        mesh_id = model.geom_dataid[geom_id]
        assert len(mesh.vertices) == model.mesh_vertnum[mesh_id]
        assert len(mesh.faces) == model.mesh_facenum[mesh_id]
        expected = np.round(geom_rgba(model, geom_id) * 255).astype(np.uint8)
        np.testing.assert_array_equal(np.unique(mesh.visual.vertex_colors, axis=0), [expected])
        colours.add(tuple(expected))
    assert len(colours) > 1  # materials give the robot more than one colour


def test_renderer_uploads_geometry_once_with_a_grid_and_fixed_bodies_placed() -> None:
    model = menagerie_model("ur5e")  # its base body is welded to the world, rotated
    server = viser.ViserServer(host="127.0.0.1", port=0, verbose=False)
    try:
        log = MessageLog(server)
        renderer = SceneRenderer(server, model)
        uploads = [name for kind, name, _ in log.entries if kind == "GlbMessage"]
        visual = [f"/robot/visual/{body.name}" for body in body_meshes(model) if not body.mocap]
        collision = [f"/robot/collision/{body.name}" for body in collision_meshes(model)]
        assert sorted(uploads) == sorted(visual + collision)  # one mesh per body and layer
        # The scene's mocap body (UR5e's "target") is drawn apart, muted.
        muted = [name for kind, name, _ in log.entries if kind == "MeshMessage"]
        assert muted == ["/scene_mocap/target"]
        assert "/grid" in server.scene._handle_from_node_name
        data = mujoco.MjData(model)
        mujoco.mj_kinematics(model, data)
        base = model.body("base").id
        assert base in renderer.static_handles
        handle = renderer.static_handles[base]
        np.testing.assert_allclose(handle.wxyz, data.xquat[base], atol=1e-9)
        assert not np.allclose(data.xquat[base], [1, 0, 0, 0])  # really rotated
        log.clear()
        rng = np.random.default_rng(1)
        for _ in range(5):
            assert renderer.render(random_configuration(model, rng))
        assert not log.kinds() & {"GlbMessage", "MeshMessage"}
        assert log.poses("/robot/visual") and not log.poses("/robot/visual/base")
    finally:
        server.stop()


def test_optional_layers_show_collision_geoms_frames_and_com(server: viser.ViserServer) -> None:
    model = builtin_model("arm7")
    renderer = SceneRenderer(server, model)
    assert renderer.collision_handles  # built-in models collide with their drawn geoms
    assert not any(h.visible for h in renderer.collision_handles.values())
    q = random_configuration(model, np.random.default_rng(2))
    renderer.render(q)
    renderer.set_collision_visible(True)
    renderer.set_frames_visible(True)
    renderer.set_com_visible(True)
    data = mujoco.MjData(model)
    data.qpos[:] = q
    mujoco.mj_forward(model, data)
    for layer in (renderer.collision_handles, renderer.frame_handles):
        for body_id, handle in layer.items():
            assert handle.visible
            np.testing.assert_allclose(handle.position, data.xpos[body_id], atol=1e-6)
    com = renderer.com_handle
    assert com.visible
    np.testing.assert_allclose(com.position, data.subtree_com[1], atol=1e-6)
    # The layers follow the next configuration too.
    q2 = random_configuration(model, np.random.default_rng(3))
    renderer.render(q2)
    data.qpos[:] = q2
    mujoco.mj_forward(model, data)
    np.testing.assert_allclose(com.position, data.subtree_com[1], atol=1e-6)
    for body_id, handle in renderer.frame_handles.items():
        np.testing.assert_allclose(handle.position, data.xpos[body_id], atol=1e-6)
    renderer.set_collision_visible(False)
    assert not any(h.visible for h in renderer.collision_handles.values())
