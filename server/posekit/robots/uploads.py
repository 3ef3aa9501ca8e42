"""Uploaded robots: checked like data from a stranger, stored, restored after a restart.

An upload is one MJCF or URDF file, or a zip of a model folder. It is unpacked into a
staging folder under the data directory (:mod:`posekit.robots.safe_archive`: paths
confined, no links, size caps); every ``.xml``/``.urdf`` in it must be well-formed XML
without entities; its model files (:func:`~posekit.robots.local_robots.model_files`)
become the robot's entry points, each checked to refer only to files inside the upload
(:mod:`posekit.robots.references`, :mod:`posekit.robots.urdf`) and compiled in a
short-lived child process with a time and memory limit, then held to the caps on a
model's size (:mod:`posekit.robots.compile_check`). Only then is the folder moved to
``<data>/robots/<name>/``, its manifest ``<data>/robots/<name>.json`` written (the
commit point: a folder without one is a leftover, removed at the next start) and the
robot added to the registry. A refused upload leaves nothing behind.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from posekit.robots.category import guess_category
from posekit.robots.compile_check import ModelCaps, check_compiles
from posekit.robots.errors import (
    RobotConflict,
    RobotFileInvalid,
    RobotInUse,
    TooManyRobots,
    UploadsBusy,
    raise_if_full,
)
from posekit.robots.loading import model_source
from posekit.robots.local_robots import (
    MODEL_SUFFIXES,
    LocalRobot,
    entry_files,
    model_files,
    safe_name,
)
from posekit.robots.references import parse_xml
from posekit.robots.registry import RobotRegistry
from posekit.robots.safe_archive import ArchiveLimits, copy_limited, extract_zip, remove_tree

logger = logging.getLogger(__name__)
ZIP_MAGIC = b"PK\x03\x04"
STAGING = ".staging-"


@dataclass(frozen=True)
class UploadLimits:
    """What uploads may hold.

    Attributes:
        robots: Uploaded robots the server keeps at most.
        archive: Caps on what an upload unpacks to (a single file: ``member_bytes``).
        model: Caps on each compiled model's size.
        compile_timeout_s: Time each entry point has to compile [s].
        at_once: Uploads checked at the same time, at most (each compiles in a child
            process of its own); more are refused with :class:`UploadsBusy`.
    """

    robots: int = 20
    archive: ArchiveLimits = field(default_factory=ArchiveLimits)
    model: ModelCaps = field(default_factory=ModelCaps)
    compile_timeout_s: float = 30.0
    at_once: int = 1


class RobotUploads:
    """The uploaded robots kept in ``directory`` (module docstring).

    Args:
        registry: Where uploaded robots are served.
        directory: The data directory; uploads live in its ``robots/`` folder.
        limits: Caps on uploads.
        users: The sessions (ids) using a robot, live or unloaded: a robot in use is
            not deleted.
    """

    def __init__(
        self,
        registry: RobotRegistry,
        directory: Path,
        limits: UploadLimits | None = None,
        users: Callable[[str], list[str]] = lambda name: [],
    ) -> None:
        self.registry = registry
        self.folder = Path(directory).resolve() / "robots"
        self.limits = limits or UploadLimits()
        self._users = users
        self._checking = threading.BoundedSemaphore(self.limits.at_once)
        self._adding = threading.Lock()  # the count and the names, checked again on adding

    # ----------------------------------------------------------- lifecycle
    def restore(self) -> list[str]:
        """Serve the robots stored by earlier runs; remove what interrupted uploads left."""
        if not self.folder.is_dir():
            return []
        restored = []
        for manifest in sorted(self.folder.glob("*.json")):
            try:
                robot = self._read_manifest(manifest)
                self.registry.add_local(robot)
                restored.append(robot.name)
            except Exception as exc:  # one broken upload must not stop the server
                logger.warning("uploaded robot %s not restored: %s", manifest.stem, exc)
        for leftover in self.folder.iterdir():
            if leftover.is_dir() and not (self.folder / f"{leftover.name}.json").is_file():
                remove_tree(leftover)
        return restored

    def count(self) -> int:
        """Uploaded robots served now."""
        return sum(robot.source == "uploaded" for robot in self.registry.local_robots())

    # -------------------------------------------------------------- upload
    def add(
        self, filename: str, content: BinaryIO, name: str | None = None, entry: str | None = None
    ) -> LocalRobot:
        """Check, store and serve an upload (module docstring); the new robot.

        Raises :class:`RobotFileInvalid` (422), :class:`UploadTooLarge` (413),
        :class:`RobotConflict` (409: the name is taken), :class:`TooManyRobots` or
        :class:`UploadsBusy` (429: another upload is being checked); nothing is kept of
        a refused upload.
        """
        robot_name = safe_name(name or PurePosixPath(filename or "robot").stem)
        # ``at_once`` uploads are checked at a time; the others are refused at once rather
        # than queued in the server's worker threads (50 waiting uploaders held every
        # thread: health checks took 25 s).
        if not self._checking.acquire(blocking=False):
            raise UploadsBusy(
                "the server is checking as many uploads as it may at once; send this one "
                "again in a few seconds"
            )
        try:
            self._check_room(robot_name)
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                staging = Path(tempfile.mkdtemp(prefix=STAGING, dir=self.folder))
            except OSError as exc:
                raise_if_full(exc)
                raise
            try:
                robot = self._check(robot_name, filename, content, staging, entry)
                stored = self._store(robot, staging, filename)
            except OSError as exc:
                remove_tree(staging)
                raise_if_full(exc)
                raise
            except BaseException:
                remove_tree(staging)
                raise
            try:
                with self._adding:  # another upload may have been added meanwhile
                    self._check_room(robot_name)
                    self.registry.add_local(stored)
            except (RobotConflict, TooManyRobots):  # or a new file in a robots folder
                self._forget(stored)
                raise
            return stored
        finally:
            self._checking.release()

    def _check_room(self, robot_name: str) -> None:
        """:class:`TooManyRobots` when the server keeps as many uploads as it may;
        :class:`RobotConflict` when ``robot_name`` is taken."""
        if self.count() >= self.limits.robots:
            raise TooManyRobots(
                f"this server keeps {self.limits.robots} uploaded robots at most; delete one first"
            )
        if robot_name in self.registry.names():
            raise RobotConflict(f"a robot named {robot_name!r} already exists; choose a name")

    def _compiled_entries(self, robot: LocalRobot) -> tuple[dict[str, Any], LocalRobot]:
        """The default entry's compile stats, and the robot without the other entry
        points that do not compile on their own (parts meant to be included, such as
        Menagerie's ``filtered_cartesian_actuators.xml`` beside ALOHA's scene); the default
        entry must compile, and no entry may break a cap."""
        limits = self.limits
        stats = check_compiles(
            model_source(robot, robot.default_entry), limits.model, limits.compile_timeout_s
        )
        kept = []
        for entry_point, path in robot.files:
            try:
                if entry_point != robot.default_entry:
                    check_compiles(
                        model_source(robot, entry_point), limits.model, limits.compile_timeout_s
                    )
                kept.append((entry_point, path))
            except RobotFileInvalid as refused:
                logger.info("upload %s: entry %s left out: %s", robot.name, entry_point, refused)
        return stats, replace(robot, files=tuple(kept))

    def _check(
        self, name: str, filename: str, content: BinaryIO, staging: Path, entry: str | None
    ) -> LocalRobot:
        """Unpack into ``staging`` and check everything; the robot, rooted there."""
        self._unpack(filename, content, staging)
        for path in sorted(staging.rglob("*")):
            if path.suffix.lower() in MODEL_SUFFIXES and path.is_file():
                parse_xml(path, staging)  # malformed XML or entities: refused
        paths = model_files(staging)
        if not paths:
            raise RobotFileInvalid(f"{filename!r} holds no MJCF (<mujoco>) or URDF (<robot>) file")
        entries = entry_files(paths, staging)
        default = entry or ("scene" if "scene" in entries else next(iter(entries)))
        if default not in entries:
            raise RobotFileInvalid(f"entry {entry!r} is not among the upload's {sorted(entries)}")
        robot = LocalRobot(
            name=name,
            title=f"{filename} (uploaded)",
            category="misc",
            source="uploaded",
            root=staging,
            files=tuple(entries.items()),
            default_entry=default,
        )
        stats, robot = self._compiled_entries(robot)
        category = guess_category(
            name,
            stats["body_names"],
            stats["joint_names"],
            stats["floating"],
            stats["serial_dofs"],
        )
        return replace(robot, category=category)

    def _unpack(self, filename: str, content: BinaryIO, staging: Path) -> None:
        suffix = PurePosixPath(filename or "").suffix.lower()
        head = content.read(4)
        content.seek(0)
        if suffix == ".zip" or (suffix not in MODEL_SUFFIXES and head == ZIP_MAGIC):
            extract_zip(content, staging, self.limits.archive)
        elif suffix in MODEL_SUFFIXES:
            target = staging / f"{safe_name(PurePosixPath(filename).stem)}{suffix}"
            copy_limited(content, target, self.limits.archive.member_bytes)
        else:
            raise RobotFileInvalid(
                f"{filename!r}: upload an MJCF (.xml) or URDF (.urdf) file, or a .zip of a "
                "model folder"
            )

    def _store(self, robot: LocalRobot, staging: Path, filename: str) -> LocalRobot:
        """Move the checked upload to its place and write its manifest (commit)."""
        final = self.folder / robot.name
        remove_tree(final)  # a leftover of an interrupted upload
        staging.rename(final)
        stored = replace(
            robot,
            root=final,
            files=tuple((e, final / p.relative_to(staging)) for e, p in robot.files),
        )
        manifest = {
            "name": stored.name,
            "title": stored.title,
            "category": stored.category,
            "default_entry": stored.default_entry,
            "files": [[e, p.relative_to(final).as_posix()] for e, p in stored.files],
            "filename": filename,
            "uploaded": time.time(),
        }
        temporary = self.folder / f".{stored.name}.json.tmp"
        temporary.write_text(json.dumps(manifest, indent=1))
        os.replace(temporary, self.folder / f"{stored.name}.json")
        return stored

    def _read_manifest(self, path: Path) -> LocalRobot:
        data = json.loads(path.read_text())
        name = str(data["name"])
        if name != path.stem or safe_name(name) != name:
            raise ValueError(f"manifest {path.name} names robot {name!r}")
        root = self.folder / name
        files = tuple((str(e), (root / str(p)).resolve()) for e, p in data["files"])
        if not all(p.is_relative_to(root) and p.is_file() for _, p in files):
            raise ValueError(f"files of {name!r} are missing")
        return LocalRobot(
            name, str(data["title"]), str(data["category"]), "uploaded", root, files,
            str(data["default_entry"]),
        )  # fmt: skip

    # -------------------------------------------------------------- delete
    def remove(self, name: str) -> None:
        """Delete an uploaded robot that no session uses (:class:`RobotInUse` else)."""
        with self._adding:
            robot = self.registry.local_robot(name)
            if robot is None or robot.source != "uploaded":
                known = self.registry.get(name)  # RobotNotFound when unknown
                raise RobotConflict(
                    f"robot {name!r} is a {known.source} robot; only uploaded robots can be deleted"
                )
            users = self._users(name)
            if users:
                shown = ", ".join(users[:10]) + (", …" if len(users) > 10 else "")
                raise RobotInUse(
                    f"robot {name!r} is used by {len(users)} session(s) ({shown}); "
                    "delete them first"
                )
            self.registry.remove(name)
            self._forget(robot)

    def _forget(self, robot: LocalRobot) -> None:
        """Delete a stored upload: its manifest first (then its folder is a leftover)."""
        (self.folder / f"{robot.name}.json").unlink(missing_ok=True)
        remove_tree(robot.root)
