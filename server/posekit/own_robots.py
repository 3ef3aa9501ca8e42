"""Wiring of the robots users bring: a folder, one file, uploads, and live reload.

Part of the composition root (:mod:`posekit.app`): from the settings it adds the
robot folder (``POSEKIT_ROBOTS_DIR``) and file (``POSEKIT_ROBOT_FILE``) to the
manager's registry, restores the uploaded robots of the data directory (before the
manager restores the sessions that use them), and, while the app runs, watches the
local robots' files and reloads their sessions when they change.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from posekit.robots.local_robots import free_name, safe_name
from posekit.robots.uploads import RobotUploads
from posekit.robots.watcher import RobotWatcher
from posekit.sessions.manager import SessionManager
from posekit.sessions.reload.model_reloader import ModelReloader, sessions_using
from posekit.settings import Settings, SettingsError


class OwnRobots:
    """The robots from files of one app: served file, uploads, watcher.

    Attributes:
        served: Registry name of ``POSEKIT_ROBOT_FILE``'s robot (None when unset).
        uploads: The uploaded robots (stored under the data directory).
        reloader: Reloads the sessions of robots whose files changed.
    """

    def __init__(self, settings: Settings, manager: SessionManager) -> None:
        registry = manager.registry
        data = settings.data_path()
        self._temporary = None
        if data is None:
            self._temporary = tempfile.TemporaryDirectory(prefix="posekit-data-")
            data = Path(self._temporary.name)
        self.uploads = RobotUploads(
            registry, data, settings.upload_limits(), lambda name: sessions_using(manager, name)
        )
        self.uploads.restore()  # first: their names are those their sessions know
        folders = []
        if settings.robots_dir:
            folder = Path(settings.robots_dir).expanduser()
            if not folder.is_dir():
                raise SettingsError(f"POSEKIT_ROBOTS_DIR {str(folder)!r} is not a folder")
            registry.add_folder(folder)
            folders.append(folder)
        self.served: str | None = None
        if settings.robot_file:
            path = Path(settings.robot_file).expanduser()
            if not path.is_file():
                raise SettingsError(f"robot file {str(path)!r} does not exist")
            served = [
                r.name for r in registry.local_robots() if path.resolve() in dict(r.files).values()
            ]
            if served:  # already a robot of the folder
                self.served = served[0]
            else:
                name = free_name(safe_name(path.stem), registry.names())
                self.served = registry.add_file(name, path).name
        self.reloader = ModelReloader(manager)
        self.watcher = RobotWatcher(registry, folders, self.reloader.reload_all)

    def start(self) -> None:
        """Watch the local robots' files (those added later too)."""
        self.watcher.start()

    def stop(self) -> None:
        """Stop watching; remove the temporary data folder (when no data directory is set)."""
        self.watcher.stop()
        if self._temporary is not None:
            self._temporary.cleanup()
