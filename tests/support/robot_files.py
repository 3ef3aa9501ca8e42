"""Robot files the tests write themselves: an MJCF arm with an OBJ mesh, a URDF package
with primitives and one ``package://`` STL mesh, and zips of them."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import numpy as np


def box_obj(half: tuple[float, float, float]) -> str:
    """A box as Wavefront OBJ text (8 vertices, 12 triangles)."""
    hx, hy, hz = half
    corners = [(x, y, z) for x in (-hx, hx) for y in (-hy, hy) for z in (-hz, hz)]
    faces = [
        (1, 3, 4),
        (1, 4, 2),
        (5, 6, 8),
        (5, 8, 7),
        (1, 2, 6),
        (1, 6, 5),
        (3, 7, 8),
        (3, 8, 4),
        (1, 5, 7),
        (1, 7, 3),
        (2, 4, 8),
        (2, 8, 6),
    ]
    lines = [f"v {x} {y} {z}" for x, y, z in corners] + [f"f {a} {b} {c}" for a, b, c in faces]
    return "\n".join(lines) + "\n"


def box_stl(half: tuple[float, float, float]) -> bytes:
    """A box as binary STL."""
    hx, hy, hz = half
    v = np.array([(x, y, z) for x in (-hx, hx) for y in (-hy, hy) for z in (-hz, hz)])
    faces = [
        (0, 2, 3),
        (0, 3, 1),
        (4, 5, 7),
        (4, 7, 6),
        (0, 1, 5),
        (0, 5, 4),
        (2, 6, 7),
        (2, 7, 3),
        (0, 4, 6),
        (0, 6, 2),
        (1, 3, 7),
        (1, 7, 5),
    ]
    out = bytearray(b"posekit test box".ljust(80, b" ") + struct.pack("<I", len(faces)))
    for a, b, c in faces:
        normal = np.cross(v[b] - v[a], v[c] - v[a])
        normal = normal / np.linalg.norm(normal)
        out += struct.pack("<12fH", *normal, *v[a], *v[b], *v[c], 0)
    return bytes(out)


MJCF_ARM = """<mujoco model="{name}">
  <compiler angle="radian" meshdir="meshes"/>
  <asset><mesh name="upper" file="upper.obj"/></asset>
  <worldbody>
    <body name="base">
      <geom type="cylinder" size="0.05 0.05" rgba="0.3 0.3 0.3 1"/>
      <body name="link1" pos="0 0 0.1">
        <joint name="shoulder" axis="0 0 1" range="-3 3"/>
        <geom type="mesh" mesh="upper" pos="0 0 0.15" rgba="0.8 0.4 0.1 1"/>
        <body name="link2" pos="0 0 0.3">
          <joint name="elbow" axis="0 1 0" range="-2.5 2.5"/>
          <geom type="capsule" fromto="0 0 0 {reach} 0 0" size="{radius}" rgba="0.2 0.5 0.9 1"/>
          <body name="link3" pos="{reach} 0 0">
            <joint name="wrist" axis="0 1 0" range="-2 2"/>
            <geom type="box" size="0.03 0.03 0.03"/>
            <site name="tool" pos="0.05 0 0"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <keyframe><key name="home" qpos="0 0.6 0.4"/></keyframe>
</mujoco>
"""


def write_mjcf_arm(
    folder: Path, name: str = "my_arm", reach: float = 0.3, radius: float = 0.03
) -> Path:
    """``folder/name.xml``, a 3-joint arm (site ``tool``) whose first link is the OBJ
    mesh ``folder/meshes/upper.obj``; returns the XML's path."""
    (folder / "meshes").mkdir(parents=True, exist_ok=True)
    (folder / "meshes" / "upper.obj").write_text(box_obj((0.03, 0.03, 0.15)))
    path = folder / f"{name}.xml"
    path.write_text(MJCF_ARM.format(name=name, reach=reach, radius=radius))
    return path


URDF_ARM = """<?xml version="1.0"?>
<robot name="two_link">
  <link name="base_link">
    <visual><geometry><cylinder radius="0.06" length="0.1"/></geometry></visual>
  </link>
  <link name="upper_arm">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0 0 0.15"/><geometry><mesh filename="package://two_link_description/meshes/upper_arm.stl"/></geometry></visual>
    <collision><origin xyz="0 0 0.15"/><geometry><box size="0.05 0.05 0.3"/></geometry></collision>
  </link>
  <link name="forearm">
    <visual><origin xyz="0.125 0 0" rpy="0 1.5708 0"/><geometry><cylinder radius="0.025" length="0.25"/></geometry></visual>
  </link>
  <link name="tool0"/>
  <joint name="shoulder_pan" type="revolute">
    <parent link="base_link"/><child link="upper_arm"/><origin xyz="0 0 0.05"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="10" velocity="2"/>
  </joint>
  <joint name="elbow" type="revolute">
    <parent link="upper_arm"/><child link="forearm"/><origin xyz="0 0 0.3"/>
    <axis xyz="0 1 0"/><limit lower="0.2" upper="2.5" effort="10" velocity="2"/>
  </joint>
  <joint name="tool_joint" type="fixed">
    <parent link="forearm"/><child link="tool0"/><origin xyz="0.25 0 0"/>
  </joint>
</robot>
"""


def write_urdf_package(folder: Path) -> Path:
    """A ROS-style package ``folder/two_link_description`` (package.xml, urdf/, meshes/)
    whose URDF has primitives, a link without inertial, a fixed ``tool0`` and one mesh
    by ``package://``; returns the URDF's path."""
    package = folder / "two_link_description"
    (package / "urdf").mkdir(parents=True, exist_ok=True)
    (package / "meshes").mkdir(exist_ok=True)
    (package / "package.xml").write_text(
        "<package format='2'><name>two_link_description</name></package>"
    )
    (package / "meshes" / "upper_arm.stl").write_bytes(box_stl((0.025, 0.025, 0.15)))
    path = package / "urdf" / "two_link.urdf"
    path.write_text(URDF_ARM)
    return path


def zip_folder(folder: Path, prefix: str = "") -> bytes:
    """Every file under ``folder`` in a zip (names relative to it, under ``prefix``)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, prefix + path.relative_to(folder).as_posix())
    return buffer.getvalue()


def zipped_description(urdf: Path) -> bytes:
    """The URDF's ROS description folder as a user zips it: the folder at the top, its
    meshes and textures inside, the package's other URDFs left out."""
    package = urdf.parent.parent
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(package.rglob("*")):
            if path.is_file() and (path.suffix != ".urdf" or path == urdf):
                archive.write(path, Path(package.name) / path.relative_to(package))
    return buffer.getvalue()


def chain(dofs: int) -> str:
    """A serial chain of ``dofs`` hinges (±3°) ending in a tool site, its home (0.1 rad)
    outside every joint's range: the QP has every limit to hold."""
    links = "".join(
        f'<body name="b{i}" pos="0 0 0.1"><joint axis="{i % 3 == 0:d} {i % 3 == 1:d} '
        f'{i % 3 == 2:d}" range="-3 3"/><geom type="capsule" size="0.02 0.05"/>'
        for i in range(dofs)
    )
    home = " ".join(["0.1"] * dofs)
    return (
        f'<mujoco><worldbody>{links}<site name="tool"/>{"</body>" * dofs}</worldbody>'
        f'<keyframe><key name="home" qpos="{home}"/></keyframe></mujoco>'
    )
