"""Robots from files: a folder of MJCF/URDF files, one file, or an upload.

In a folder, every MJCF file (``*.xml`` whose root is ``<mujoco>``) that no other file
of the folder includes, and every URDF file (``*.urdf``, or ``*.xml`` whose root is
``<robot>``), is a robot; hidden files and folders (and ``__MACOSX``) are skipped. A robot is named after its file
(``my_arm.urdf`` → ``my_arm``); a file called ``scene``, ``model``, ``robot`` or
``main`` is named after its folder (``ur5e/scene.xml`` → ``ur5e``, as Menagerie lays
robots out); names shared by several files become their paths (``a/arm.xml`` →
``a_arm``), and a name a built-in or Menagerie robot already has gets ``_local``.
Names keep to letters, digits, ``_``, ``.`` and ``-`` (64 at most).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from posekit.robots.category import guess_category
from posekit.robots.references import element_names, included_files, model_kind

LocalSource = Literal["local", "uploaded"]
MODEL_SUFFIXES = (".xml", ".urdf")
GENERIC_STEMS = frozenset({"scene", "model", "robot", "main"})
MAX_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class LocalRobot:
    """A robot served from files (a registry entry of source ``local`` or ``uploaded``).

    Attributes:
        name, title, category: As listed.
        source: ``local`` (a folder or file of the server's) or ``uploaded``.
        root: The folder of its files: uploads' references must stay inside it.
        files: (entry point, model file) pairs, in entry order.
        default_entry: The entry a session uses unless told otherwise.
    """

    name: str
    title: str
    category: str
    source: LocalSource
    root: Path
    files: tuple[tuple[str, Path], ...]
    default_entry: str

    @property
    def entries(self) -> tuple[str, ...]:
        return tuple(entry for entry, _ in self.files)

    @property
    def confined(self) -> bool:
        """Whether every file it reads must lie inside :attr:`root` (uploads)."""
        return self.source == "uploaded"

    def file(self, entry: str) -> Path:
        """The model file of an entry point."""
        return dict(self.files)[entry]


def safe_name(text: str) -> str:
    """``text`` as a robot or entry name (module docstring); ``robot`` when nothing is left."""
    return _UNSAFE.sub("_", text).strip("_.-")[:MAX_NAME] or "robot"


def model_files(folder: Path) -> list[Path]:
    """The robots' model files under ``folder`` (module docstring), sorted."""
    candidates = sorted(
        path
        for path in folder.rglob("*")
        if path.suffix.lower() in MODEL_SUFFIXES
        and path.is_file()
        and not any(p.startswith(".") or p == "__MACOSX" for p in path.relative_to(folder).parts)
    )
    kinds = {path: model_kind(path) for path in candidates}
    included = included_files([path for path, kind in kinds.items() if kind == "mjcf"])
    return [
        path
        for path, kind in kinds.items()
        if kind == "urdf" or (kind == "mjcf" and path not in included)
    ]


def _base_name(path: Path, folder: Path) -> str:
    if path.stem.lower() in GENERIC_STEMS and path.parent != folder:
        return safe_name(path.parent.name)
    return safe_name(path.stem)


def file_names(paths: Iterable[Path], folder: Path, taken: Collection[str] = ()) -> dict[Path, str]:
    """A unique name for each model file under ``folder`` (module docstring)."""
    paths = list(paths)
    bases = {path: _base_name(path, folder) for path in paths}
    counts = Counter(bases.values())
    names: dict[Path, str] = {}
    for path in paths:
        name = bases[path]
        if counts[name] > 1:
            name = safe_name(path.relative_to(folder).with_suffix("").as_posix().replace("/", "_"))
        names[path] = free_name(name, {*taken, *names.values()})
    return names


def free_name(name: str, taken: Collection[str]) -> str:
    """``name``, or ``name_local`` (then ``name_local_2``, …) when it is taken."""
    if name not in taken:
        return name
    candidate, n = f"{name[: MAX_NAME - 6]}_local", 2
    while candidate in taken:
        candidate, n = f"{name[: MAX_NAME - 8]}_local_{n}", n + 1
    return candidate


def guess_file_category(name: str, path: Path) -> str:
    """The category of a robot file, from its names (:mod:`posekit.robots.category`)."""
    bodies, joints, floating = element_names(path)
    return guess_category(name, bodies, joints, floating)


def file_robot(
    name: str,
    path: Path,
    *,
    source: LocalSource = "local",
    root: Path | None = None,
    title: str | None = None,
    category: str | None = None,
) -> LocalRobot:
    """A robot of one model file (entry point: the file's name)."""
    path = path.resolve()
    return LocalRobot(
        name=name,
        title=title or f"{path.name} ({source})",
        category=category or guess_file_category(name, path),
        source=source,
        root=(root or path.parent).resolve(),
        files=((safe_name(path.stem), path),),
        default_entry=safe_name(path.stem),
    )


def folder_robots(folder: Path, taken: Collection[str] = ()) -> list[LocalRobot]:
    """Every robot under ``folder`` (module docstring), their files' root being ``folder``."""
    folder = folder.resolve()
    names = file_names(model_files(folder), folder, taken)
    return [
        file_robot(name, path, root=folder, title=f"{path.relative_to(folder).as_posix()} (local)")
        for path, name in names.items()
    ]


def entry_files(paths: Iterable[Path], folder: Path) -> Mapping[str, Path]:
    """Entry names for the model files of one robot (an upload): their unique names."""
    return {name: path for path, name in file_names(paths, folder).items()}
