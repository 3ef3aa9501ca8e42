"""Robots from files: discovery and names, URDF through MuJoCo's importer, references
confined to an upload, the compile check in a child process, presets with reasons."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from posekit.robots import RobotRegistry
from posekit.robots.category import guess_category
from posekit.robots.compile_check import ModelCaps, check_compiles
from posekit.robots.errors import RobotConflict, RobotFileInvalid, UploadTooLarge
from posekit.robots.loading import compile_source, model_source
from posekit.robots.local_robots import file_robot, folder_robots, model_files
from posekit.robots.presets import preset_reasons
from posekit.robots.urdf import physical_inertia
from support.robot_files import write_mjcf_arm, write_urdf_package


def test_a_folder_lists_top_level_models_named_after_their_files(tmp_path: Path) -> None:
    write_mjcf_arm(tmp_path)
    write_urdf_package(tmp_path)
    (tmp_path / "ur5e").mkdir()
    (tmp_path / "ur5e" / "ur5e.xml").write_text("<mujoco><worldbody/></mujoco>")
    (tmp_path / "ur5e" / "scene.xml").write_text('<mujoco><include file="ur5e.xml"/></mujoco>')
    (tmp_path / "notes.xml").write_text("<notes/>")  # not a model
    (tmp_path / "two_link_description" / "launch.xml").write_text("<launch/>")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "x.xml").write_text("<mujoco/>")
    files = [p.relative_to(tmp_path).as_posix() for p in model_files(tmp_path)]
    assert files == ["my_arm.xml", "two_link_description/urdf/two_link.urdf", "ur5e/scene.xml"]
    robots = {r.name: r for r in folder_robots(tmp_path, taken={"two_link"})}
    # scene.xml is named after its folder; a name already taken gets "_local"
    assert set(robots) == {"my_arm", "two_link_local", "ur5e"}
    assert robots["ur5e"].file("scene").name == "scene.xml"
    assert all(r.source == "local" and r.root == tmp_path.resolve() for r in robots.values())


def test_the_registry_serves_files(tmp_path: Path) -> None:
    registry = RobotRegistry(menagerie=False)
    entry = registry.add_file("bench_arm", write_mjcf_arm(tmp_path))
    assert entry.source == "local" and entry.category == "arm"
    assert registry.names() == ["arm7", "humanoid", "bench_arm"]
    with pytest.raises(RobotConflict, match="already exists"):
        registry.add_file("arm7", tmp_path / "my_arm.xml")
    assert registry.model("bench_arm").nbody == 5


def test_urdf_meshes_by_package_and_defaults_for_what_urdf_lacks(tmp_path: Path) -> None:
    registry = RobotRegistry(menagerie=False)
    registry.add_file("two_link", write_urdf_package(tmp_path))
    model = registry.model("two_link")
    bodies = [model.body(i).name for i in range(model.nbody)]
    # Fixed links stay bodies (tool0 can be a target); the forearm has no <inertial>.
    assert bodies == ["world", "base_link", "upper_arm", "forearm", "tool0"]
    assert model.body("forearm").mass[0] == pytest.approx(1e-3)
    assert model.nmesh == 1 and model.nmeshvert == 8  # the package:// STL, visual kept
    # home: every joint at 0, moved a tenth of its range inside it (the elbow's starts
    # at 0.2), not stretched straight out (the elbow bent).
    shoulder, elbow = model.key("home").qpos.tolist()
    low, high = model.jnt_range[1]
    assert shoulder == 0.0 and low + 0.1 * (high - low) - 1e-9 <= elbow <= high
    source = registry.source("two_link", "two_link")
    assert source is not None
    assert {p.name for p in source.files} == {"two_link.urdf", "upper_arm.stl"}
    reasons = preset_reasons(model)
    assert set(reasons) == {"tool0", "posture"}
    assert "end effector" in reasons["tool0"] and "'tool'" in reasons["tool0"]


def test_urdf_meshes_in_formats_nobody_reads_are_left_out_with_a_note(tmp_path: Path) -> None:
    urdf = write_urdf_package(tmp_path)
    urdf.write_text(urdf.read_text().replace("upper_arm.stl", "upper_arm.step"))
    robot = file_robot("two_link", urdf)
    source = model_source(robot, robot.default_entry)
    assert len(source.notes) == 1 and "upper_arm.step" in source.notes[0]
    assert "left out" in source.notes[0]


@pytest.mark.parametrize("source", ["local", "uploaded"])
@pytest.mark.parametrize("form", ["collada", "ascii stl"])
def test_collada_and_ascii_stl_meshes_are_converted_with_their_shapes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str, source: str
) -> None:
    """ROS packages give visual meshes as COLLADA and some STL as ASCII: MuJoCo reads
    neither, so they are converted (to a cache folder; an upload's in a child process
    with limits) and keep their size."""
    import trimesh

    monkeypatch.setenv("POSEKIT_MESH_CACHE", str(tmp_path / "cache"))
    urdf = write_urdf_package(tmp_path)
    meshes = urdf.parent.parent / "meshes"
    box = trimesh.creation.box(extents=(0.05, 0.05, 0.3))
    if form == "collada":
        box.export(meshes / "upper_arm.dae")
        urdf.write_text(urdf.read_text().replace("upper_arm.stl", "upper_arm.dae"))
    else:
        (meshes / "upper_arm.stl").write_text(trimesh.exchange.stl.export_stl_ascii(box))
    robot = file_robot("two_link", urdf, source=source, root=tmp_path)
    loaded = model_source(robot, robot.default_entry)
    assert any("converted to STL" in note for note in loaded.notes), loaded.notes
    model = compile_source(loaded)
    assert model.nmesh == 1
    vertices = model.mesh_vert[: model.mesh_vertnum[0]]
    extent = sorted(vertices.max(axis=0) - vertices.min(axis=0))
    assert extent == pytest.approx([0.05, 0.05, 0.3], abs=1e-6)


def test_an_uploaded_mesh_that_cannot_be_read_is_left_out_with_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POSEKIT_MESH_CACHE", str(tmp_path / "cache"))
    urdf = write_urdf_package(tmp_path)
    (urdf.parent.parent / "meshes" / "upper_arm.dae").write_text("<COLLADA><oops")
    urdf.write_text(urdf.read_text().replace("upper_arm.stl", "upper_arm.dae"))
    robot = file_robot("two_link", urdf, source="uploaded", root=tmp_path)
    loaded = model_source(robot, robot.default_entry)
    note = next(note for note in loaded.notes if "upper_arm.dae" in note)
    assert "left out (it could not be read" in note
    assert compile_source(loaded).nmesh == 0  # the robot loads without it


def test_a_leaf_is_the_end_effector_when_no_name_says_one() -> None:
    import mujoco

    model = mujoco.MjModel.from_xml_string(
        "<mujoco><worldbody><body name='a'><joint/><geom size='.1'/>"
        "<body name='b' pos='0 0 .2'><joint/><geom size='.1'/></body></body>"
        "</worldbody></mujoco>"
    )
    reasons = preset_reasons(model)
    assert "leaf of the kinematic tree" in reasons["b"]


def uploaded(folder: Path, main: Path) -> object:
    return file_robot("up", main, source="uploaded", root=folder)


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ('<include file="../outside.xml"/>', "outside the upload"),
        ('<asset><mesh name="m" file="/etc/passwd"/></asset>', "relative to the upload"),
        ('<compiler meshdir="/etc"/>', "relative to the upload"),
        ('<compiler meshdir="../.."/>', "outside the upload"),
        ('<asset><texture name="t" type="2d" file="http://x/t.png"/></asset>', "relative"),
        ('<asset><hfield name="h" file="../../h.png"/></asset>', "outside the upload"),
    ],
)
def test_mjcf_references_leaving_an_upload_are_refused(
    tmp_path: Path, reference: str, message: str
) -> None:
    folder = tmp_path / "upload"
    folder.mkdir()
    (tmp_path / "outside.xml").write_text("<mujoco/>")
    main = folder / "robot.xml"
    main.write_text(f"<mujoco>{reference}<worldbody/></mujoco>")
    robot = file_robot("up", main, source="uploaded", root=folder)
    with pytest.raises(RobotFileInvalid, match=message) as error:
        model_source(robot, robot.default_entry)
    assert str(tmp_path) not in str(error.value)
    assert "robot.xml" in str(error.value)


def test_urdf_meshes_leaving_an_upload_are_refused(tmp_path: Path) -> None:
    urdf = write_urdf_package(tmp_path)
    package = urdf.parents[1]
    for mesh, message in (
        ("file:///etc/passwd.stl", "relative to the upload"),
        ("../../../secret.stl", "outside the upload"),
        ("package://other_pkg/x.stl", "not found"),
    ):
        urdf.write_text(
            urdf.read_text().split("<mesh filename=")[0]
            + f'<mesh filename="{mesh}"/>'
            + "</geometry></visual></link></robot>"
        )
        robot = file_robot("up", urdf, source="uploaded", root=package)
        with pytest.raises(RobotFileInvalid, match=message):
            model_source(robot, robot.default_entry)


def test_xml_entities_are_refused_not_expanded(tmp_path: Path) -> None:
    main = tmp_path / "bomb.xml"
    main.write_text(
        '<?xml version="1.0"?><!DOCTYPE m [<!ENTITY a "aaaaaaaaaa">'
        '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><mujoco model="&b;"/>'
    )
    robot = file_robot("up", main, source="uploaded", root=tmp_path)
    with pytest.raises(RobotFileInvalid, match="malformed XML"):
        model_source(robot, robot.default_entry)


def test_the_compile_check_runs_in_a_child_with_caps_and_a_time_limit(tmp_path: Path) -> None:
    robot = file_robot("up", write_mjcf_arm(tmp_path), source="uploaded", root=tmp_path)
    source = model_source(robot, robot.default_entry)
    stats = check_compiles(source, ModelCaps(), timeout_s=60)
    assert stats["bodies"] == 5 and stats["mesh_vertices"] == 8
    assert stats["joint_names"] == ["shoulder", "elbow", "wrist"]
    with pytest.raises(UploadTooLarge, match="5 bodies; an uploaded robot may have at most 4"):
        check_compiles(source, ModelCaps(bodies=4), timeout_s=60)
    with pytest.raises(UploadTooLarge, match="mesh vertices"):
        check_compiles(source, ModelCaps(mesh_vertices=7), timeout_s=60)
    started = time.monotonic()
    with pytest.raises(RobotFileInvalid, match=r"did not compile my_arm\.xml within 0\.05 s"):
        check_compiles(source, ModelCaps(), timeout_s=0.05)
    assert time.monotonic() - started < 5.0  # the child was killed, not waited for


@pytest.mark.parametrize(
    ("body", "figure"),
    [
        (  # a 249-byte file's 10000² height field: 400 MB once compiled
            '<asset><hfield name="h" nrow="3000" ncol="3000" size="1 1 1 1"/></asset>'
            '<worldbody><geom type="hfield" hfield="h"/></worldbody>',
            "9000000 height-field samples; an uploaded robot may have at most 4000000 "
            "(POSEKIT_ROBOT_MAX_HFIELD_SAMPLES)",
        ),
        (
            '<asset><texture name="t" type="2d" builtin="checker" width="5000" height="5000"/>'
            "</asset>",
            "75000000 bytes of textures; an uploaded robot may have at most 67108864 "
            "(POSEKIT_ROBOT_MAX_TEXTURE_BYTES)",
        ),
        (
            "<worldbody>"
            + "".join(
                f'<body pos="{i} 0 0"><freejoint/><geom size=".1"/></body>' for i in range(50)
            )
            + "</worldbody>",
            "300 joint DoF; an uploaded robot may have at most 256 (POSEKIT_ROBOT_MAX_DOFS)",
        ),
    ],
)
def test_tiny_uploads_that_cost_much_once_compiled_are_refused(
    tmp_path: Path, body: str, figure: str
) -> None:
    """Caps on what a model costs compiled, read in the child before the server compiles it."""
    main = tmp_path / "robot.xml"
    main.write_text(f"<mujoco>{body}</mujoco>")
    robot = file_robot("up", main, source="uploaded", root=tmp_path)
    with pytest.raises(UploadTooLarge) as refused:
        check_compiles(model_source(robot, "robot"), ModelCaps(), timeout_s=60)
    assert figure in str(refused.value)


def test_mujoco_errors_name_files_relative_to_the_upload(tmp_path: Path) -> None:
    main = tmp_path / "robot.xml"
    main.write_text('<mujoco><asset><mesh name="m" file="missing.stl"/></asset></mujoco>')
    robot = file_robot("up", main, source="uploaded", root=tmp_path)
    with pytest.raises(RobotFileInvalid) as error:
        check_compiles(model_source(robot, "robot"), ModelCaps(), timeout_s=60)
    assert "missing.stl" in str(error.value) and str(tmp_path) not in str(error.value)


@pytest.mark.parametrize(
    ("name", "bodies", "joints", "floating", "category"),
    [
        ("my_arm", ["base", "link1", "link2"], ["shoulder", "elbow"], False, "arm"),
        (
            "biped",
            ["pelvis", "left_thigh", "left_shin", "right_thigh", "right_shin"],
            ["l_hip", "l_knee", "r_hip", "r_knee"],
            True,
            "biped",
        ),
        ("dog", [f"{leg}_calf" for leg in ("fl", "fr", "rl", "rr")], ["x"], True, "quadruped"),
        ("g", ["torso", "left_thigh", "left_arm", "right_arm"], ["knee"], True, "humanoid"),
        ("grip", ["palm", "finger_left", "finger_right"], ["j1"], False, "end_effector"),
        ("bi", ["left_arm_link1", "right_arm_link1"], ["j"], False, "dual_arm"),
        ("rover", ["chassis", "wheel_left", "wheel_right"], ["w1"], False, "mobile_base"),
        ("quad", ["body", "rotor1"], [], True, "drone"),
        ("statue", ["base"], [], False, "misc"),
    ],
)
def test_category_guesses(
    name: str, bodies: list[str], joints: list[str], floating: bool, category: str
) -> None:
    assert guess_category(name, bodies, joints, floating) == category


QUADRUPED = [f"{leg}_{part}" for leg in ("FL", "FR", "HL", "HR") for part in ("SHOULDER", "FOOT")]
HUMANOID = ["l_foot", "l_foot_dh_frame", "r_foot", "r_foot_dh_frame", "l_hand", "r_hand"]


@pytest.mark.parametrize(
    ("bodies", "floating", "serial", "category"),
    [
        (QUADRUPED, True, None, "quadruped"),  # shoulders of legs make no humanoid
        (HUMANOID, True, None, "humanoid"),  # two frames a foot are still two feet
        (["link1", "hand", "leftfinger", "rightfinger"], False, 7, "arm"),  # a Panda
        (["palm", "link_0.0", "link_4.0", "link_8.0"], False, 0, "end_effector"),  # a hand
    ],
)
def test_categories_of_real_trees(
    bodies: list[str], floating: bool, serial: int | None, category: str
) -> None:
    assert guess_category("robot", bodies, ["j"], floating, serial) == category


@pytest.mark.parametrize(
    ("moments", "what"),
    [
        ('ixx="0.01" ixy="0.02" ixz="0" iyy="0.01" iyz="0" izz="0.01"', "not positive definite"),
        ('ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.05"', "I1 + I2 < I3"),
    ],
)
def test_a_urdf_inertia_no_rigid_body_has_is_repaired_with_a_note(
    tmp_path: Path, moments: str, what: str
) -> None:
    """URDFs that other tools load but MuJoCo's compiler refuses ("inertia must satisfy
    A + B >= C", "positive eigenvalues") compile, keeping the link's mass, and say so."""
    path = write_urdf_package(tmp_path)
    urdf = path.read_text()
    assert '<inertia ixx="' in urdf
    start = urdf.index("<inertia ")
    path.write_text(urdf[:start] + f"<inertia {moments}/>" + urdf[urdf.index("/>", start) + 2 :])
    registry = RobotRegistry(menagerie=False)
    registry.add_file("odd", path)
    model = registry.model("odd")
    assert model.nbody >= 3 and (model.body_inertia[1:] > 0).all()  # the world has none
    source = registry.source("odd", registry.resolve_entry("odd", None))
    assert source is not None and any("repaired" in note for note in source.notes), what


def test_physical_inertia_keeps_a_valid_one_and_its_axes() -> None:
    valid = np.array([[2.0, 0.1, 0.0], [0.1, 3.0, 0.0], [0.0, 0.0, 4.0]])
    np.testing.assert_allclose(physical_inertia(valid), valid, atol=1e-15)
    broken = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 5.0]])
    fixed = physical_inertia(broken)
    moments = np.linalg.eigvalsh(fixed)
    assert moments[2] <= moments[0] + moments[1] + 1e-12
    assert np.trace(fixed) == pytest.approx(np.trace(broken))
