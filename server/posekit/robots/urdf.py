r"""URDF through MuJoCo's own URDF importer, with its file paths and defaults fixed.

posekit does not interpret URDF itself: it rewrites two things in the XML and hands
it to :meth:`mujoco.MjSpec.from_string`.

- **Mesh paths.** ``package://PKG/path`` is looked for in a folder called ``PKG`` (or
  holding a ``package.xml`` naming ``PKG``) among the URDF's parent folders (for an
  upload, those inside it) and the
  folders up to four levels below the robot's folder (and, for local files, in
  ``$ROS_PACKAGE_PATH``), then in the robot's folder and the URDF's parent folders
  themselves (an archive of the package's contents), then the path's tails there (a
  zip of one description folder of a larger package); ``file://`` URLs and
  absolute paths are taken as they are for local files and refused in uploads;
  relative paths are relative to the URDF's folder. Each mesh is given to MuJoCo by
  its absolute path; messages name it relative to the robot's folder.
- **Defaults for what URDF lacks** (``<mujoco><compiler>``, attributes the file sets
  itself are kept): visual geometry is kept (``discardvisual="false"``: MuJoCo drops it
  by default), links joined by fixed joints stay separate bodies
  (``fusestatic="false"``, so that ``tool0``/``tcp`` frames can be targets), links
  without ``<inertial>`` weigh ``BOUND_MASS`` kg with ``BOUND_INERTIA`` kg m²
  (MuJoCo refuses massless moving bodies), an inertia that is no physical one (not
  positive definite, or principal moments breaking the triangle inequality
  :math:`I_1 + I_2 \ge I_3`, as many published URDFs have) is repaired with a note —
  posekit needs kinematics, and the mass and centre of mass are kept: its principal
  moments are raised to at least ``BOUND_INERTIA`` and, where the inequality fails,
  set to their mean (MuJoCo's ``balanceinertia``), about the same principal axes — and
  meshes in formats MuJoCo cannot read (COLLADA ``.dae``, …) are converted to STL
  (:mod:`posekit.robots.mesh_convert`), with a note. The robot's root link is fixed to the
  world, as MuJoCo imports it, unless its links name legs: then it floats, standing on
  the floor (:func:`~posekit.robots.category.looks_legged`). A ``home`` keyframe is
  added, away from the singular stretched-out pose where it can
  (:func:`posekit.robots.compile_worker.add_home_keyframe`).
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np

from posekit.robots.category import looks_legged
from posekit.robots.errors import RobotFileInvalid
from posekit.robots.mesh_convert import CONVERTED_FORMATS, converted_meshes, needs_conversion
from posekit.robots.references import is_plain_relative, parse_xml, shown

MESH_FORMATS = (".stl", ".obj", ".msh")  # what MuJoCo reads
BOUND_MASS = 1e-3  # [kg]
BOUND_INERTIA = 1e-6  # [kg m²]
COMPILER_DEFAULTS = {
    "discardvisual": "false",
    "fusestatic": "false",
    "boundmass": str(BOUND_MASS),
    "boundinertia": str(BOUND_INERTIA),
}
INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
PACKAGE_SEARCH_DEPTH = 4  # folders below the robot's folder searched for a package


@dataclass
class UrdfSource:
    """A URDF rewritten for MuJoCo: its XML, the files it reads, and notes for users."""

    xml: str
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    converted: int = 0
    """Meshes converted to STL (:mod:`posekit.robots.mesh_convert`)."""
    floating: bool = False
    """The root gets a free joint: the links name legs (:func:`looks_legged`)."""


def _inside(urdf: Path, root: Path, confined: bool) -> list[Path]:
    """The URDF's folder and its parents (for an upload, those inside it)."""
    return [
        f for f in [urdf.parent, *urdf.parent.parents] if not confined or f.is_relative_to(root)
    ]


def _package_dirs(name: str, urdf: Path, root: Path, confined: bool) -> list[Path]:
    """Folders that may be ``package://name`` (module docstring), best first."""
    inside = _inside(urdf, root, confined)
    below = [
        found
        for depth in range(PACKAGE_SEARCH_DEPTH)
        for found in (sorted(root.glob("*/" * depth + name)) if name else [])
    ]
    ros = (
        []
        if confined
        else [Path(p) / name for p in os.environ.get("ROS_PACKAGE_PATH", "").split(":") if p]
    )
    named = [
        folder
        for folder in [*inside, *below, *ros]
        if folder.is_dir() and (folder.name == name or _declares_package(folder, name))
    ]
    return [*named, root, *inside]


def _package_candidates(
    package: str, rest: str, urdf: Path, root: Path, confined: bool
) -> list[tuple[Path, Path]]:
    """``(folder, path)`` pairs that may hold ``package://package/rest``, best first: the
    package's folders with the whole path, then the path's tails (a folder and a file at
    least) in the robot's folder and the URDF's: a zip of one description folder of a
    larger package (``package://example-robot-data/robots/panda_description/meshes/…``
    in a zip of ``panda_description/``)."""
    parts = Path(rest).parts
    whole = [(folder, Path(rest)) for folder in _package_dirs(package, urdf, root, confined)]
    places = list(dict.fromkeys([root, *_inside(urdf, root, confined)]))
    tails = [(folder, Path(*parts[i:])) for i in range(1, len(parts) - 1) for folder in places]
    return whole + tails


def _declares_package(folder: Path, name: str) -> bool:
    manifest = folder / "package.xml"
    if not manifest.is_file():
        return False
    try:
        return (parse_xml(manifest).findtext("name") or "").strip() == name
    except RobotFileInvalid:
        return False


def resolve_mesh(value: str, urdf: Path, root: Path, confined: bool) -> Path:
    """The file a URDF mesh ``filename`` names (module docstring)."""
    where = f"{shown(urdf, root)}: mesh {value!r}"
    if value.startswith("package://"):
        package, _, rest = value[len("package://") :].partition("/")
        for folder, tail in _package_candidates(package, unquote(rest), urdf, root, confined):
            candidate = (folder / tail).resolve()
            if candidate.is_file() and (not confined or candidate.is_relative_to(root)):
                return candidate
        raise RobotFileInvalid(f"{where} not found (no folder {package!r} holds {rest!r})")
    if value.startswith("file://") or not is_plain_relative(value):
        if confined:
            raise RobotFileInvalid(f"{where} must be a path relative to the upload")
        path = Path(unquote(urlparse(value).path) if value.startswith("file://") else value)
    else:
        path = (urdf.parent / value).resolve()
        if confined and not path.is_relative_to(root):
            raise RobotFileInvalid(f"{where} points outside the upload")
    if not path.is_file():
        raise RobotFileInvalid(f"{where} not found")
    return path


def physical_inertia(matrix: np.ndarray) -> np.ndarray:
    """``matrix`` [kg m²] made a physical inertia (module docstring): principal moments at
    least ``BOUND_INERTIA`` and, when one exceeds the sum of the other two, all three
    at their mean; the principal axes kept."""
    moments, axes = np.linalg.eigh((matrix + matrix.T) / 2)
    moments = np.maximum(moments, BOUND_INERTIA)
    if moments[2] > moments[0] + moments[1]:  # eigh sorts them: the largest is last
        moments[:] = moments.mean()
    return axes @ np.diag(moments) @ axes.T


def _fix_inertia(link: ET.Element, source: UrdfSource) -> None:
    """Repair a link's ``<inertia>`` that no rigid body has, with a note."""
    inertia = link.find("inertial/inertia")
    if inertia is None:
        return
    try:
        xx, xy, xz, yy, yz, zz = (float(inertia.get(key, "0")) for key in INERTIA_KEYS)
    except ValueError:
        return  # not numbers: MuJoCo's importer says so
    matrix = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    fixed = physical_inertia(matrix)
    if np.allclose(fixed, matrix, rtol=1e-9, atol=1e-12):
        return
    for key, (i, j) in zip(
        INERTIA_KEYS, [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)], strict=True
    ):
        inertia.set(key, repr(float(fixed[i, j])))
    moments = ", ".join(f"{m:.3g}" for m in np.linalg.eigvalsh(matrix))
    source.notes.append(
        f"link {link.get('name')!r}: its inertia (principal moments {moments} kg m²) is no "
        "rigid body's; repaired (moments at least 1e-6, balanced where I1 + I2 < I3)"
    )


def _set_compiler(robot: ET.Element) -> None:
    """Add posekit's defaults to the URDF's ``<mujoco><compiler>`` (kept where set)."""
    extension = robot.find("mujoco")
    if extension is None:
        extension = ET.Element("mujoco")
        robot.insert(0, extension)
    compiler = extension.find("compiler")
    if compiler is None:
        compiler = ET.SubElement(extension, "compiler")
    for attribute, value in COMPILER_DEFAULTS.items():
        compiler.set(attribute, compiler.get(attribute, value))
    compiler.set("strippath", "false")  # meshes are given by absolute path
    for attribute in ("meshdir", "texturedir", "assetdir"):
        compiler.attrib.pop(attribute, None)


def urdf_source(path: Path, root: Path, confined: bool) -> UrdfSource:
    """The URDF at ``path`` rewritten for MuJoCo (module docstring); ``confined``: every
    file must lie inside ``root`` (uploads)."""
    robot = parse_xml(path, root)
    if robot.tag != "robot":
        raise RobotFileInvalid(f"{shown(path, root)}: not a URDF (its root is <{robot.tag}>)")
    source = UrdfSource("", [path])
    to_convert: list[_Mesh] = []
    for link in robot.iter("link"):
        _fix_inertia(link, source)
        for kind in ("visual", "collision"):
            for item in list(link.findall(kind)):
                to_convert += _fix_meshes(item, link, kind, path, root, confined, source)
    if to_convert:
        _convert(to_convert, root if confined else None, source)
    for node in robot.iter():
        if node.tag != "mesh" and "filename" in node.attrib:
            del node.attrib["filename"]  # textures: MuJoCo's URDF importer reads none
    _set_compiler(robot)
    source.floating = looks_legged([link.get("name", "") for link in robot.iter("link")])
    if source.floating:
        source.notes.append("its links name legs: its root link floats (a free joint)")
    if source.converted:
        source.notes.append(
            f"{source.converted} meshes in formats MuJoCo does not read (COLLADA, …) were "
            "converted to STL: their shapes are kept, their colours and textures are not"
        )
    source.xml = ET.tostring(robot, encoding="unicode")
    return source


@dataclass
class _Mesh:
    """A mesh element of a link's visual or collision, and the file it names."""

    element: ET.Element
    item: ET.Element  # its <visual> or <collision>
    link: ET.Element
    kind: str
    value: str  # its filename, as the URDF gives it
    file: Path


def _fix_meshes(
    item: ET.Element,
    link: ET.Element,
    kind: str,
    urdf: Path,
    root: Path,
    confined: bool,
    source: UrdfSource,
) -> list[_Mesh]:
    """Point each mesh of a visual/collision element at its file, or drop the element,
    with a note, when no one reads its format; the meshes to convert first (MuJoCo
    cannot read their format) are returned."""
    to_convert = []
    for mesh in item.iter("mesh"):
        value = mesh.get("filename", "")
        suffix = Path(urlparse(value).path).suffix.lower()
        if suffix not in MESH_FORMATS and suffix not in CONVERTED_FORMATS:
            formats = ", ".join(MESH_FORMATS + CONVERTED_FORMATS)
            _leave_out(item, link, kind, value, f"posekit reads {formats} meshes", source)
            return []
        resolved = resolve_mesh(value, urdf, root, confined)
        source.files.append(resolved)
        mesh.set("filename", str(resolved))
        if suffix in CONVERTED_FORMATS or needs_conversion(resolved):
            to_convert.append(_Mesh(mesh, item, link, kind, value, resolved))
    return to_convert


def _leave_out(
    item: ET.Element, link: ET.Element, kind: str, value: str, why: str, source: UrdfSource
) -> None:
    if item in list(link):
        link.remove(item)
        source.notes.append(f"link {link.get('name')!r}: {kind} mesh {value!r} left out ({why})")


def _convert(meshes: list[_Mesh], root: Path | None, source: UrdfSource) -> None:
    """Convert the meshes MuJoCo cannot read, in one go (for an upload, its folder
    ``root``: in a child that reads nothing else)."""
    converted = converted_meshes([mesh.file for mesh in meshes], root)
    for mesh in meshes:
        done = converted[mesh.file]
        if isinstance(done, Path):
            mesh.element.set("filename", str(done))
            source.converted += 1
        else:
            _leave_out(mesh.item, mesh.link, mesh.kind, mesh.value, done, source)
