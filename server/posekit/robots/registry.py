"""The robot registry: posekit's built-in models, every robot of MuJoCo Menagerie, and
robots from files (a folder, one file, uploads).

Listing is free: built-in models are the ``*.xml`` files of the ``posekit.models``
package and Menagerie robots come from the metadata bundled with the
``mujoco-menagerie`` package (no download). Loading a Menagerie robot resolves it from
``MENAGERIE_ROOT`` when that is set, else from the package's download cache
(``MENAGERIE_CACHE_DIR``), downloading it there on first use unless downloads are off
(``download=False``: the robot is then unavailable at once). Robots from files
(:class:`~posekit.robots.local_robots.LocalRobot`, sources ``local`` and ``uploaded``)
are compiled from their files (:mod:`posekit.robots.loading`); when their files change,
:meth:`RobotRegistry.reload` forgets their compiled models. Compiled models are shared read-only
by every session on the same robot and released when none uses them
(:mod:`posekit.robots.model_cache`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

import mujoco

from posekit.robots.errors import RobotConflict, RobotLoadError, RobotNotFound, RobotUnavailable
from posekit.robots.loading import ModelSource, compile_source, model_source
from posekit.robots.local_robots import LocalRobot, file_robot, folder_robots
from posekit.robots.model_cache import CacheLimits, ModelCache

Source = Literal["builtin", "menagerie", "local", "uploaded"]
Availability = Literal["here", "download", "unavailable"]
"""Called with a robot's name and its new record (None: removed) after it was added,
removed or its files changed."""
_LISTING_ORDER = {"builtin": 0, "local": 1, "uploaded": 1, "menagerie": 2}

# Titles and categories of the built-in models (any other XML in models/ is listed too).
_BUILTIN_INFO: dict[str, tuple[str, str]] = {
    "arm7": ("posekit arm7 (7-DoF arm, built-in)", "arm"),
    "humanoid": ("posekit humanoid (floating base, built-in)", "humanoid"),
}

DEFAULT_ROBOT = "arm7"


@dataclass(frozen=True)
class RobotEntry:
    """One robot the registry knows, without loading it.

    Attributes:
        name: Registry name, used in URLs and session specs.
        title: Human-readable name.
        category: ``arm``, ``humanoid``, ``hand``, ``quadruped``, … (Menagerie's).
        source: ``builtin`` (this repository's ``models/``), ``menagerie``, ``local``
            (the server's files) or ``uploaded``.
        entries: Entry points (top-level XML files) that compile on their own.
        default_entry: The entry a session uses unless told otherwise.
    """

    name: str
    title: str
    category: str
    source: Source
    entries: tuple[str, ...]
    default_entry: str


class RobotRegistry:
    """Built-in, Menagerie and file robots by name, with a cache of compiled models.

    Args:
        builtin_dir: Folder of built-in MJCF files; the ``posekit.models`` package by
            default.
        menagerie: Whether to list MuJoCo Menagerie robots.
        cache: How many compiled models to keep once no session uses them.
        local: Robots from files to serve from the start.
        download: Whether a Menagerie robot that is neither under ``MENAGERIE_ROOT`` nor
            in the download cache may be downloaded; when not, loading it raises
            :class:`RobotUnavailable` at once.
    """

    def __init__(
        self,
        builtin_dir: Path | None = None,
        menagerie: bool = True,
        cache: CacheLimits | None = None,
        local: Iterable[LocalRobot] = (),
        download: bool = True,
    ) -> None:
        self._builtin_dir = builtin_dir or Path(str(resources.files("posekit.models")))
        self._menagerie = menagerie
        self.download = download
        self.cache = ModelCache(cache)
        self._entries: dict[str, RobotEntry] = {}
        self._builtin_files: dict[str, Path] = {}
        self._local: dict[str, LocalRobot] = {}
        self._sources: dict[tuple[str, str], ModelSource] = {}
        self._lock = threading.RLock()
        for path in sorted(self._builtin_dir.glob("*.xml")):
            title, category = _BUILTIN_INFO.get(path.stem, (path.stem, "other"))
            self._entries[path.stem] = RobotEntry(
                path.stem, title, category, "builtin", (path.stem,), path.stem
            )
            self._builtin_files[path.stem] = path
        if menagerie:
            self._add_menagerie()
        for robot in local:
            self._put(robot)

    def _add_menagerie(self) -> None:
        try:
            import mujoco_menagerie as mm

            robots = mm.robots()
        except Exception:  # a broken or missing registry must not take the server down
            return
        for robot in robots:
            if robot.name in self._entries:
                continue  # built-in names win
            default = robot.default_scene or robot.default_model
            self._entries[robot.name] = RobotEntry(
                robot.name,
                robot.display_name,
                robot.category,
                "menagerie",
                tuple(robot.entry_names),
                default,
            )

    # ---------------------------------------------------------------- listing
    def entries(self) -> list[RobotEntry]:
        """Every robot: built-in ones first, then those from files, then Menagerie's,
        each sorted by name."""
        with self._lock:
            entries = list(self._entries.values())
        return sorted(entries, key=lambda e: (_LISTING_ORDER[e.source], e.name))

    def names(self) -> list[str]:
        """Every robot name."""
        return [e.name for e in self.entries()]

    def get(self, name: str) -> RobotEntry:
        """The robot called ``name``; raises :class:`RobotNotFound` naming close matches."""
        entry = self._entries.get(name)
        if entry is None:
            raise RobotNotFound(name, self.names())
        return entry

    def resolve_entry(self, name: str, entry: str | None = None) -> str:
        """The entry point to load: ``entry`` checked against the robot's, or its default."""
        robot = self.get(name)
        if entry is None:
            return robot.default_entry
        if entry not in robot.entries:
            raise RobotNotFound(entry, list(robot.entries), what=f"entry point of {name!r}")
        return entry

    # ---------------------------------------------------------------- loading
    def model(self, name: str, entry: str | None = None) -> mujoco.MjModel:
        """The compiled model of a robot entry, cached; treat it as read-only.

        Raises:
            RobotNotFound: unknown robot or entry.
            RobotUnavailable: the Menagerie files could not be fetched.
            RobotLoadError: MuJoCo could not compile the model.
        """
        key = (name, self.resolve_entry(name, entry))
        return self.cache.get(key, lambda: self._compile(*key))

    def is_loaded(self, name: str, entry: str | None = None) -> bool:
        """Whether the model is already compiled (then :meth:`model` does no I/O)."""
        return self.cache.is_loaded((name, self.resolve_entry(name, entry)))

    def expire(self) -> None:
        """Release the compiled models no session uses that are past their time in the
        cache (:meth:`ModelCache.expire`)."""
        self.cache.expire()

    def _compile(self, name: str, entry: str) -> mujoco.MjModel:
        local = self.local_robot(name)
        if local is not None:
            source = model_source(local, entry)
            model = compile_source(source)
            with self._lock:
                self._sources[(name, entry)] = source
            return model
        robot = self.get(name)
        if robot.source == "builtin":
            path = self._builtin_files[name]
        else:
            path = self._menagerie_xml(name, entry, self.download)
        try:
            # Through a spec: MjModel.from_xml_path would keep the parsed model (meshes
            # included) in MuJoCo's "last loaded XML" until the next load.
            return mujoco.MjSpec.from_file(str(path)).compile()
        except Exception as exc:
            raise RobotLoadError(f"MuJoCo could not compile {name!r} ({entry}): {exc}") from exc

    # ------------------------------------------------------ robots from files
    def add_file(
        self, name: str, path: Path | str, *, title: str | None = None, category: str | None = None
    ) -> RobotEntry:
        """Serve one MJCF or URDF file as robot ``name`` (source ``local``; entry point:
        the file's name; category guessed from its names unless given)."""
        return self.add_local(file_robot(name, Path(path), title=title, category=category))

    def add_folder(self, folder: Path | str) -> list[RobotEntry]:
        """Serve every robot file under ``folder`` not served yet
        (:func:`~posekit.robots.local_robots.folder_robots`); returns the new ones."""
        with self._lock:
            served = {path for robot in self._local.values() for _, path in robot.files}
            taken = set(self._entries)
        robots = folder_robots(Path(folder), taken)
        return [self.add_local(r) for r in robots if not {p for _, p in r.files} & served]

    def add_local(self, robot: LocalRobot) -> RobotEntry:
        """Serve a robot from files; :class:`RobotConflict` when its name is taken."""
        with self._lock:
            if robot.name in self._entries:
                raise RobotConflict(f"a robot named {robot.name!r} already exists")
            entry = self._put(robot)
        return entry

    def remove(self, name: str) -> None:
        """Stop serving a robot from files (sessions keep the model they hold)."""
        with self._lock:
            if self._local.pop(self.get(name).name, None) is None:
                raise RobotConflict(f"robot {name!r} is not served from files; it stays")
            del self._entries[name]
        self.cache.invalidate(lambda key: _robot_of(key) == name)

    def reload(self, name: str) -> None:
        """The files of robot ``name`` changed: forget its compiled models (the next
        :meth:`model` compiles the files again)."""
        self.cache.invalidate(lambda key: _robot_of(key) == name)

    def local_robot(self, name: str) -> LocalRobot | None:
        """The record of a robot from files (None for built-in and Menagerie robots)."""
        with self._lock:
            return self._local.get(name)

    def local_robots(self) -> list[LocalRobot]:
        with self._lock:
            return list(self._local.values())

    def source(self, name: str, entry: str) -> ModelSource | None:
        """What the latest compile of a robot from files read (files, notes), if any."""
        with self._lock:
            return self._sources.get((name, entry))

    def _put(self, robot: LocalRobot) -> RobotEntry:
        entry = RobotEntry(
            robot.name,
            robot.title,
            robot.category,
            robot.source,
            robot.entries,
            robot.default_entry,
        )
        self._local[robot.name] = robot
        self._entries[robot.name] = entry
        return entry

    def availability(self, name: str) -> Availability:
        """Whether robot ``name`` loads here: ``here`` (built in, from files, in the
        Menagerie checkout ``MENAGERIE_ROOT`` or its download cache), ``download`` (a
        Menagerie robot fetched on first use) or ``unavailable`` (neither, and
        ``MENAGERIE_ROOT`` is set or downloads are off). Nothing is downloaded."""
        if self.get(name).source != "menagerie":
            return "here"
        import mujoco_menagerie as mm

        try:
            cache = mm.Cache()
            if cache.root is not None:
                return "here" if (cache.root / name).is_dir() else "unavailable"
            if cache.is_cached(mm.get(name)):
                return "here"
        except (mm.MenagerieError, OSError):
            return "unavailable"
        return "download" if self.download else "unavailable"

    @staticmethod
    def _menagerie_xml(name: str, entry: str, download: bool) -> Path:
        """The XML file of a Menagerie robot entry, from ``MENAGERIE_ROOT`` or the
        download cache; downloaded first when it is in neither and ``download`` is on."""
        import mujoco_menagerie as mm

        try:
            robot = mm.get(name)
            cache = mm.Cache()  # MENAGERIE_ROOT and MENAGERIE_CACHE_DIR as they are now
            if not download and cache.root is None and not cache.is_cached(robot):
                raise RobotUnavailable(
                    f"robot {name!r} is neither in a Menagerie checkout (MENAGERIE_ROOT is "
                    "unset) nor in the Menagerie download cache, and downloads are off "
                    "(POSEKIT_MENAGERIE_DOWNLOAD=false)"
                )
            return Path(robot.xml(entry, cache))
        except mm.MenagerieError as exc:
            raise RobotUnavailable(
                f"robot {name!r} could not be fetched from MuJoCo Menagerie: {exc}"
            ) from exc
        except OSError as exc:
            raise RobotUnavailable(f"robot {name!r} could not be read: {exc}") from exc


def _robot_of(key: object) -> object:
    """The robot name of a model-cache key ``(name, entry)``."""
    return key[0] if isinstance(key, tuple) and key else None
