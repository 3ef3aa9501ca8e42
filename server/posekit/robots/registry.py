"""The robot registry: posekit's built-in models plus every robot of MuJoCo Menagerie.

Listing is free: built-in models are the ``*.xml`` files of the ``posekit.models``
package and Menagerie robots come from the metadata bundled with the
``mujoco-menagerie`` package (no download). Loading a Menagerie robot downloads it on
first use, or resolves it from ``MENAGERIE_ROOT`` when that is set. Compiled models are
shared read-only by every session on the same robot and released when none uses them
(:mod:`posekit.robots.model_cache`).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

import mujoco

from posekit.robots.errors import RobotLoadError, RobotNotFound, RobotUnavailable
from posekit.robots.model_cache import CacheLimits, ModelCache

Source = Literal["builtin", "menagerie"]

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
        source: ``builtin`` (this repository's ``models/``) or ``menagerie``.
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
    """Built-in and Menagerie robots by name, with a cache of compiled models.

    Args:
        builtin_dir: Folder of built-in MJCF files; the ``posekit.models`` package by
            default.
        menagerie: Whether to list MuJoCo Menagerie robots.
        cache: How many compiled models to keep once no session uses them.
    """

    def __init__(
        self,
        builtin_dir: Path | None = None,
        menagerie: bool = True,
        cache: CacheLimits | None = None,
    ) -> None:
        self._builtin_dir = builtin_dir or Path(str(resources.files("posekit.models")))
        self._menagerie = menagerie
        self.cache = ModelCache(cache)
        self._entries: dict[str, RobotEntry] = {}
        self._builtin_files: dict[str, Path] = {}
        for path in sorted(self._builtin_dir.glob("*.xml")):
            title, category = _BUILTIN_INFO.get(path.stem, (path.stem, "other"))
            self._entries[path.stem] = RobotEntry(
                path.stem, title, category, "builtin", (path.stem,), path.stem
            )
            self._builtin_files[path.stem] = path
        if menagerie:
            self._add_menagerie()

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

    def __reduce__(self) -> tuple[type[RobotRegistry], tuple[Path, bool, CacheLimits]]:
        """Pickled as its recipe (a solver process builds the same registry), not its cache."""
        return (RobotRegistry, (self._builtin_dir, self._menagerie, self.cache.limits))

    # ---------------------------------------------------------------- listing
    def entries(self) -> list[RobotEntry]:
        """Every robot: built-in ones first, then Menagerie's, each sorted by name."""
        return sorted(self._entries.values(), key=lambda e: (e.source != "builtin", e.name))

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
        robot = self.get(name)
        if robot.source == "builtin":
            path = self._builtin_files[name]
        else:
            path = self._menagerie_xml(name, entry)
        try:
            # Through a spec: MjModel.from_xml_path would keep the parsed model (meshes
            # included) in MuJoCo's "last loaded XML" until the next load.
            return mujoco.MjSpec.from_file(str(path)).compile()
        except Exception as exc:
            raise RobotLoadError(f"MuJoCo could not compile {name!r} ({entry}): {exc}") from exc

    @staticmethod
    def _menagerie_xml(name: str, entry: str) -> Path:
        import mujoco_menagerie as mm

        try:
            return Path(mm.get(name).xml(entry))
        except mm.MenagerieError as exc:
            raise RobotUnavailable(
                f"robot {name!r} could not be fetched from MuJoCo Menagerie: {exc}"
            ) from exc
        except OSError as exc:
            raise RobotUnavailable(f"robot {name!r} could not be read: {exc}") from exc
