"""Meshes MuJoCo cannot read (COLLADA ``.dae``, glTF, PLY …, ASCII STL, STL of more
than 200,000 triangles), converted with trimesh to a binary STL or an OBJ, which it can.

Most ROS description packages give their visual meshes as COLLADA: without this a
URDF robot renders as its (grey, coarse) collision meshes. A converted mesh is one
triangle mesh in the file's units and frame (trimesh applies the file's node
transforms and unit scale), without its colours and textures: MuJoCo's URDF importer
reads neither. Converted files are kept in a cache folder by the digest of the
source's bytes, so a robot is converted once, and a changed file (live reload) is
converted anew.

An upload's meshes are a stranger's data: they are converted in one short-lived child
process per robot (:mod:`posekit.robots.mesh_worker`, run as ``python -I``) with at
most :data:`CHILD_MEMORY_BYTES` of address space and :data:`CHILD_TIMEOUT_S` seconds,
so a mesh that makes a parser loop, allocate without end or crash costs the server
nothing but that child. A local robot's meshes are converted in the server process.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

import trimesh

from posekit.robots.child_process import ChildStopped, ChildTimedOut, ask_child

CONVERTED_FORMATS = (".dae", ".gltf", ".glb", ".ply", ".off")
"""What is converted (trimesh reads them; ``.dae`` through pycollada)."""


STL_MAX_FACES = 200_000
"""The most triangles MuJoCo reads from an STL file (larger meshes are written as OBJ)."""
_STL_HEADER = 84  # bytes: an 80-byte header and the triangle count
_STL_FACE = 50  # bytes a triangle
CHILD_MEMORY_BYTES = 2 << 30  # [B] address space of the converting child (uploads)
CHILD_TIMEOUT_S = 60.0  # [s] the converting child has for all of one robot's meshes
WORKER = Path(__file__).with_name("mesh_worker.py")


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


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:32]


def cached_mesh(path: Path) -> Path | None:
    """The converted mesh of ``path`` when the cache has it."""
    digest = _digest(path)
    for suffix in (".stl", ".obj"):
        if (cache_dir() / f"{digest}{suffix}").is_file():
            return cache_dir() / f"{digest}{suffix}"
    return None


def convert_mesh(path: Path) -> Path:
    """The mesh at ``path`` as a binary STL (an OBJ beyond :data:`STL_MAX_FACES`), put in
    the cache; :class:`MeshNotConverted` when it cannot be read or has no triangles."""
    try:
        mesh = trimesh.load(path, force="mesh")
    except Exception as exc:  # trimesh's readers raise whatever their parser does
        raise MeshNotConverted(f"it could not be read ({type(exc).__name__}: {exc})") from None
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise MeshNotConverted("it holds no triangles")
    kind = "stl" if len(mesh.faces) <= STL_MAX_FACES else "obj"
    target = cache_dir() / f"{_digest(path)}.{kind}"
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.part")
    mesh.export(partial, file_type=kind)
    partial.replace(target)  # whole or not at all, for a concurrent reader
    return target


def converted_meshes(paths: Iterable[Path], upload: Path | None) -> dict[Path, Path | str]:
    """Each mesh's converted file, or why it could not be converted; from the cache
    where it can, else converted here (local robots) or, for an ``upload`` (its folder),
    in one child that may read nothing else (module docstring)."""
    done: dict[Path, Path | str] = {}
    missing = []
    for path in dict.fromkeys(paths):
        cached = cached_mesh(path)
        if cached is not None:
            done[path] = cached
        else:
            missing.append(path)
    if upload is not None and missing:
        return done | _convert_in_child(missing, upload)
    for path in missing:
        try:
            done[path] = convert_mesh(path)
        except MeshNotConverted as exc:
            done[path] = str(exc)
    return done


def _convert_in_child(paths: list[Path], upload: Path) -> dict[Path, Path | str]:
    request = {
        "paths": [str(p) for p in paths],
        "memory_bytes": CHILD_MEMORY_BYTES,
        "read": [str(upload)],
    }
    env = {**os.environ, "POSEKIT_MESH_CACHE": str(cache_dir())}
    try:
        reply = ask_child(WORKER, request, CHILD_TIMEOUT_S, env=env)
    except ChildTimedOut:
        reason = f"converting the upload's meshes took more than {CHILD_TIMEOUT_S:g} s"
        return dict.fromkeys(paths, reason)
    except ChildStopped:
        return dict.fromkeys(paths, "the converter stopped (out of memory or a crash)")
    answers = {Path(path): answer for path, answer in reply.items()}
    return {
        path: Path(answers[path]["file"]) if "file" in answers[path] else answers[path]["error"]
        for path in paths
    }
