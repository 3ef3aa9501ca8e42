"""Live reload: when a robot's files change, its live sessions run the new model.

:meth:`ModelReloader.reload` is called (by the file watcher,
:class:`~posekit.robots.watcher.RobotWatcher`) with the name of a robot whose files
changed. It tells the registry (which forgets the robot's compiled models), compiles
the files again once per entry point in use, and hands the new model to every live
session on it (:meth:`Session.reload_model`: the spec fitted by
:func:`~posekit.sessions.reload.model_fit.fit_spec`, validated, then swapped). A session whose model did
not change (same compiled bytes: a file saved without a change) is left alone. When
the files no longer compile, every session keeps its model and gets a ``failed``
report with MuJoCo's message. A robot whose file is gone and that no session uses
(live or unloaded) leaves the registry.

Sessions unloaded after being idle are not touched: they are revived from their spec
on the model their robot has then.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable

import mujoco

from posekit.robots.loading import model_digest
from posekit.sessions.live.session import Session
from posekit.sessions.manager import SessionManager
from posekit.sessions.reload.model_fit import fit_spec
from posekit.sessions.reload.reload_report import ReloadReport
from posekit.sessions.specs.session_spec import SessionSpec

logger = logging.getLogger(__name__)


class ModelReloader:
    """Reloads the models of a manager's live sessions (module docstring)."""

    def __init__(self, manager: SessionManager) -> None:
        self.manager = manager

    def reload_all(self, robots: Iterable[str]) -> list[ReloadReport]:
        """:meth:`reload` each robot; the reports of every session touched."""
        reports: list[ReloadReport] = []
        for name in sorted(set(robots)):
            try:
                reports += self.reload(name)
            except Exception:  # one robot must not stop the others' reloads
                logger.exception("could not reload robot %s", name)
        return reports

    def reload(self, name: str) -> list[ReloadReport]:
        """The files of robot ``name`` changed: reload its sessions' models."""
        registry = self.manager.registry
        robot = registry.local_robot(name)
        if robot is None:
            return []
        sessions = [s for s in self.manager.sessions() if s.robot == name and not s.closed]
        if not all(path.is_file() for _, path in robot.files) and not sessions_using(
            self.manager, name
        ):
            registry.remove(name)
            logger.info("robot %s: its file is gone; no longer served", name)
            return []
        registry.reload(name)
        reports: list[ReloadReport] = []
        for entry in sorted({s.entry for s in sessions}):
            group = [s for s in sessions if s.entry == entry]
            try:
                model = registry.model(name, entry)
            except Exception as exc:
                logger.warning("robot %s (%s) does not compile any more: %s", name, entry, exc)
                failed = ReloadReport(
                    robot=name, entry=entry, time=time.time(), status="failed", error=str(exc)
                )
                for session in group:
                    session.report_reload(failed)
                    reports.append(failed)
                continue
            reports += self._swap(group, model)
        return reports

    def _swap(self, sessions: list[Session], model: mujoco.MjModel) -> list[ReloadReport]:
        """Hand ``model`` to each session whose model differs from it."""
        digests: dict[int, str] = {}
        new = model_digest(model)
        reports = []
        for session in sessions:
            old = session.model
            if old is model or digests.setdefault(id(old), model_digest(old)) == new:
                continue

            def fit(
                spec: SessionSpec, current: mujoco.MjModel, session: Session = session
            ) -> tuple[SessionSpec, ReloadReport]:
                return fit_spec(spec, current, model, session.caps)

            try:
                reports.append(session.reload_model(model, fit))
                logger.info("session %s: reloaded robot %s", session.id, session.robot)
            except Exception as exc:  # the session keeps its model
                logger.exception("session %s could not take the reloaded model", session.id)
                failed = ReloadReport(
                    robot=session.robot,
                    entry=session.entry,
                    time=time.time(),
                    status="failed",
                    error=f"the session could not be moved to the new model: {exc}",
                )
                session.report_reload(failed)
                reports.append(failed)
        return reports


def sessions_using(manager: SessionManager, name: str) -> list[str]:
    """Ids of the sessions on robot ``name``, live or unloaded."""
    live = [s.id for s in manager.sessions() if s.robot == name]
    kept = [u.summary.id for u in manager.unloaded() if u.summary.robot == name]
    return live + kept
