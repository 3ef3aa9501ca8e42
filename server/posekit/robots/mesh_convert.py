"""Meshes MuJoCo cannot read (COLLADA ``.dae``, glTF, PLY …, ASCII STL, STL of more
than 200,000 triangles), converted with trimesh to a binary STL or an OBJ, which it can.

Most ROS description packages give their visual meshes as COLLADA: without this a
URDF robot renders as its (grey, coarse) collision meshes. A converted mesh is one
triangle mesh in the file's units and frame (trimesh applies the file's node
transforms and unit scale), without its colours and textures: MuJoCo's URDF importer
reads neither. Converted files are kept in a cache folder by the digest of the
source's bytes, so a robot is converted once, and a changed file (live reload) is
converted anew.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import trimesh

CONVERTED_FORMATS = (".dae", ".gltf", ".glb", ".ply", ".off")
"""What is converted (trimesh reads them; ``.dae`` through pycollada)."""


STL_MAX_FACES = 200_000
"""The most triangles MuJoCo reads from an STL file (larger meshes are written as OBJ)."""
_STL_HEADER = 84  # bytes: an 80-byte header and the triangle count
_STL_FACE = 50  # bytes a triangle


def needs_conversion(path: Path) -> bool:
    """Whether ``path``, a mesh MuJoCo reads by its suffix, is an STL it refuses: ASCII
    (a binary STL is exactly ``84 + 50 n`` bytes) or of more than :data:`STL_MAX_FACES`."""
    if path.suffix.lower() != ".stl":
        return False
    size = path.stat().st_size
    with path.open("rb") as file:
        head = file.read(_STL_HEADER)
    faces = int.from_bytes(head[80:84], "little") if len(head) == _STL_HEADER else -1
    return size != _STL_HEADER + _STL_FACE * faces or faces > STL_MAX_FACES


def cache_dir() -> Path:
    """Where converted meshes are kept: ``$POSEKIT_MESH_CACHE``, else
    ``$XDG_CACHE_HOME/posekit/meshes`` (``~/.cache/posekit/meshes``)."""
    given = os.environ.get("POSEKIT_MESH_CACHE")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "posekit" / "meshes"


class MeshNotConverted(ValueError):
    """A mesh file trimesh cannot read, or that holds no triangles."""


def converted_mesh(path: Path) -> Path:
    """The mesh at ``path`` as a binary STL (an OBJ beyond :data:`STL_MAX_FACES`),
    converted once, then taken from the cache; :class:`MeshNotConverted` when it cannot
    be read or has no triangles."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:32]
    for suffix in (".stl", ".obj"):
        if (cache_dir() / f"{digest}{suffix}").is_file():
            return cache_dir() / f"{digest}{suffix}"
    try:
        mesh = trimesh.load(path, force="mesh")
    except Exception as exc:  # trimesh's readers raise whatever their parser does
        raise MeshNotConverted(f"it could not be read ({type(exc).__name__}: {exc})") from None
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise MeshNotConverted("it holds no triangles")
    kind = "stl" if len(mesh.faces) <= STL_MAX_FACES else "obj"
    target = cache_dir() / f"{digest}.{kind}"
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.part")
    mesh.export(partial, file_type=kind)
    partial.replace(target)  # whole or not at all, for a concurrent reader
    return target
