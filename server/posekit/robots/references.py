"""What a robot's XML files are and what they refer to, read without compiling them.

XML is read with :mod:`defusedxml` (no DTD entities, no external entities: a
"billion laughs" file is refused, not expanded). An MJCF file refers to other files
through ``<include file>`` (resolved, like MuJoCo does, against the main file's
folder), through every attribute whose name starts with ``file`` (``<mesh file>``,
``<texture file>``, ``fileright``, ``<hfield file>``, ``<skin file>``, ``<model
file>``, …) and through ``<compiler meshdir|texturedir|assetdir>``. A reference's
*candidates* are every place MuJoCo may look for it; :func:`check_confined` requires all
of them to lie inside a folder (an upload), and the live-reload watcher treats all of
them as the robot's files.
"""

from __future__ import annotations

import os
import posixpath
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

from posekit.robots.category import looks_legged
from posekit.robots.errors import RobotFileInvalid

MAX_XML_FILES = 200  # a model and its includes, at most
DIR_ATTRIBUTES = ("meshdir", "texturedir", "assetdir")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


@dataclass(frozen=True)
class Reference:
    """One file reference of a model: where it is written and where it may point."""

    source: Path  # the XML file holding it
    element: str
    attribute: str
    value: str
    candidates: tuple[Path, ...]


def shown(path: Path, root: Path | None) -> str:
    """``path`` relative to ``root`` when inside it (as messages show it), else its name."""
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return path.name


def parse_xml(path: Path, root: Path | None = None) -> ET.Element:
    """The root element of an XML file; :class:`RobotFileInvalid` naming the file (relative
    to ``root``) when it is not well-formed XML or declares entities."""
    try:
        element = SafeET.parse(path).getroot()
    except (ET.ParseError, DefusedXmlException, ValueError) as exc:
        raise RobotFileInvalid(f"{shown(path, root)}: malformed XML ({exc})") from None
    except OSError as exc:
        raise RobotFileInvalid(f"{shown(path, root)}: cannot be read ({exc.strerror})") from None
    if element is None:
        raise RobotFileInvalid(f"{shown(path, root)}: empty XML")
    return element


def root_tag(path: Path) -> str | None:
    """The tag of the file's root element, or None when it is not readable XML."""
    try:
        return parse_xml(path).tag
    except RobotFileInvalid:
        return None


def model_kind(path: Path) -> str | None:
    """``"mjcf"`` (root ``<mujoco>``), ``"urdf"`` (root ``<robot>``) or None."""
    return {"mujoco": "mjcf", "robot": "urdf"}.get(root_tag(path) or "")


def is_plain_relative(value: str) -> bool:
    """Whether ``value`` is a relative path without a URL scheme (``package://`` aside)."""
    return not (
        value.startswith(("/", "\\"))
        or _DRIVE.match(value)
        or _SCHEME.match(value)
        or "\0" in value
    )


def _join(base: Path, value: str) -> Path:
    """``base / value`` normalised lexically (``..`` applied, no symlink resolution)."""
    return Path(posixpath.normpath(os.path.join(base, value)))


def mjcf_tree(main: Path, root: Path | None = None) -> list[tuple[Path, ET.Element]]:
    """The main MJCF file and every file it includes (recursively), parsed."""
    found: list[tuple[Path, ET.Element]] = []
    pending = [main]
    seen: set[Path] = set()
    while pending:
        path = pending.pop(0)
        if path in seen:
            continue
        seen.add(path)
        if len(seen) > MAX_XML_FILES:
            raise RobotFileInvalid(f"{shown(main, root)}: more than {MAX_XML_FILES} included files")
        element = parse_xml(path, root)
        found.append((path, element))
        for include in element.iter("include"):
            value = include.get("file")
            if value and is_plain_relative(value):
                candidate = _join(main.parent, value)
                if candidate.is_file() and (root is None or _inside(candidate, root)):
                    pending.append(candidate)
    return found


def mjcf_references(main: Path, root: Path | None = None) -> list[Reference]:
    """Every file reference of an MJCF model and its includes (module docstring)."""
    tree = mjcf_tree(main, root)
    base = main.parent
    dirs: list[Reference] = []
    for path, element in tree:
        for node in element.iter("compiler"):
            for attribute in DIR_ATTRIBUTES:
                value = node.get(attribute)
                if value is not None:
                    dirs.append(
                        Reference(path, "compiler", attribute, value, (_join(base, value),))
                    )
    bases = [base, *(ref.candidates[0] for ref in dirs)]
    references = list(dirs)
    for path, element in tree:
        for node in element.iter():
            for attribute, value in node.attrib.items():
                if attribute.startswith("file"):
                    places = {_join(b, value) for b in ([base] if node.tag == "include" else bases)}
                    references.append(
                        Reference(path, str(node.tag), attribute, value, tuple(sorted(places)))
                    )
    return references


def _inside(path: Path, root: Path) -> bool:
    return path.is_relative_to(root)


def check_confined(references: list[Reference], root: Path) -> None:
    """Refuse (:class:`RobotFileInvalid`) any reference that is absolute, a URL, or may
    point outside ``root``; messages name files relative to ``root``."""
    root = Path(posixpath.normpath(root))
    for ref in references:
        where = f"{shown(ref.source, root)}: <{ref.element} {ref.attribute}={ref.value!r}>"
        if not is_plain_relative(ref.value):
            raise RobotFileInvalid(f"{where} must be a path relative to the upload")
        if not all(_inside(candidate, root) for candidate in ref.candidates):
            raise RobotFileInvalid(f"{where} points outside the upload")


def included_files(paths: list[Path]) -> set[Path]:
    """The MJCF files among ``paths`` that another one of them includes."""
    included: set[Path] = set()
    for path in paths:
        try:
            element = parse_xml(path)
        except RobotFileInvalid:
            continue
        for include in element.iter("include"):
            value = include.get("file")
            if value and is_plain_relative(value):
                included.add(_join(path.parent, value))
    return included


def element_names(path: Path) -> tuple[list[str], list[str], bool]:
    """(body or link names, joint names, has a free/floating joint) of one file and its
    includes, for guessing a robot's category without compiling it."""
    try:
        tree = mjcf_tree(path) if model_kind(path) == "mjcf" else [(path, parse_xml(path))]
    except RobotFileInvalid:
        return [], [], False
    bodies: list[str] = []
    joints: list[str] = []
    free = False
    for _, element in tree:
        for node in element.iter():
            name = node.get("name", "")
            if node.tag in ("body", "link"):
                bodies.append(name)
            elif node.tag in ("joint", "freejoint"):
                joints.append(name)
                free = free or node.tag == "freejoint" or node.get("type") in ("free", "floating")
    if tree and model_kind(path) == "urdf":
        free = free or looks_legged(bodies)
    return bodies, joints, free
