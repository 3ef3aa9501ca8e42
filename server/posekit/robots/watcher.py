"""Watching robot files on disk (:mod:`watchfiles`), for live reload.

A thread watches every folder of the robot folders (``posekit up --robots DIR``) and
the folders of every file a served local robot reads (its model file, and once
compiled its includes, meshes and textures). Edits are debounced: changes are gathered
until none came for ``step_ms`` (at most ``debounce_ms``), so that an editor's burst
of writes is one reload. Then

- a new model file in a robot folder becomes a robot (:meth:`RobotRegistry.add_folder`);
- every local robot one of whose files changed is handed, by name, to ``on_change``
  (the live reload, :class:`posekit.sessions.reload.model_reloader.ModelReloader`).

Uploaded robots are never watched (their files do not change). Which folders are
watched is looked at again after every batch and every ``RESCAN_MS``: a robot compiled
meanwhile may read files in new folders. Where the file system gives no events (some
network or container mounts), set ``WATCHFILES_FORCE_POLLING=1``.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

import watchfiles

from posekit.robots.local_robots import MODEL_SUFFIXES, LocalRobot
from posekit.robots.registry import RobotRegistry

logger = logging.getLogger(__name__)
DEBOUNCE_MS = 1600
STEP_MS = 300
RESCAN_MS = 2000


class RobotWatcher:
    """Watches the registry's local robots and ``folders`` (module docstring).

    Args:
        registry: The robots served.
        folders: Robot folders: new model files there become robots.
        on_change: Called (on the watcher's thread) with the names of the local robots
            whose files changed.
    """

    def __init__(
        self,
        registry: RobotRegistry,
        folders: Iterable[Path],
        on_change: Callable[[set[str]], object],
        *,
        debounce_ms: int = DEBOUNCE_MS,
        step_ms: int = STEP_MS,
    ) -> None:
        self.registry = registry
        self.folders = [Path(folder).resolve() for folder in folders]
        self.on_change = on_change
        self._debounce_ms = debounce_ms
        self._step_ms = step_ms
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.batches = 0  # change batches handled (diagnostics, tests)

    def start(self) -> None:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(
                target=self._run, name="posekit-robot-watcher", daemon=True
            )
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    # ------------------------------------------------------------- watching
    def robot_files(self, robot: LocalRobot) -> set[Path]:
        """The files of a local robot: its model files and what its compiled entry
        points read."""
        files = {path for _, path in robot.files}
        for entry in robot.entries:
            source = self.registry.source(robot.name, entry)
            if source is not None:
                files |= source.files
        return files

    def watch_paths(self) -> list[Path]:
        """The existing folders to watch (not recursively: each one is listed)."""
        folders: set[Path] = set()
        for folder in self.folders:
            for path, dirs, _ in os.walk(folder):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                folders.add(Path(path))
        for robot in self.registry.local_robots():
            if robot.source == "local":
                folders |= {path.parent for path in self.robot_files(robot)}
        return sorted(folder for folder in folders if folder.is_dir())

    def handle(self, changed: set[Path], added: set[Path] | None = None) -> set[str]:
        """Act on one batch of changed paths, ``added`` among them (all when None)
        (module docstring); the robots reloaded."""
        self.batches += 1
        added = changed if added is None else added
        for folder in self.folders:
            if any(p.suffix.lower() in MODEL_SUFFIXES and p.is_relative_to(folder) for p in added):
                for entry in self.registry.add_folder(folder):
                    logger.info("new robot %s from %s", entry.name, entry.title)
        affected = {
            robot.name
            for robot in self.registry.local_robots()
            if robot.source == "local" and self.robot_files(robot) & changed
        }
        if affected:
            self.on_change(affected)
        return affected

    def _run(self) -> None:
        while not self._stop.is_set():
            paths = self.watch_paths()
            if not paths:
                self._stop.wait(RESCAN_MS / 1e3)
                continue
            try:
                self._watch(paths)
            except Exception:  # a vanished folder, too many watches: look again soon
                logger.exception("robot watcher: watching %d folders failed", len(paths))
                self._stop.wait(1.0)

    def _watch(self, paths: list[Path]) -> None:
        """Watch ``paths`` until they are no longer the folders to watch, or stop."""
        for changes in watchfiles.watch(
            *paths,
            debounce=self._debounce_ms,
            step=self._step_ms,
            stop_event=self._stop,
            rust_timeout=RESCAN_MS,
            yield_on_timeout=True,
            recursive=False,
            raise_interrupt=False,
            ignore_permission_denied=True,
        ):
            if changes:
                added = {
                    Path(path) for change, path in changes if change == watchfiles.Change.added
                }
                try:
                    self.handle({Path(path) for _, path in changes}, added)
                except Exception:
                    logger.exception("robot watcher: could not handle %d changes", len(changes))
            if self.watch_paths() != paths:
                return
