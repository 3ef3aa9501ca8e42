"""The viewer's GUI: every panel of one session, shared by everyone watching it.

Panels, top to bottom: Session (viewers, status, solve time, frame robot, link, keyframe
reset, save/load spec, exports), Tasks, Add task, Limits, Solver, Joints, Display, Errors
and Takes. They act
through the same :class:`Session` methods as the REST API, with the same validation;
a rejected change is shown to the viewer who made it and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import viser
from posekit.sessions.live.session import Session
from posekit.sessions.live.state import SessionState
from posekit.sessions.takes.library import TakeLibrary

from posekit_viewer.add_task_panel import AddTaskPanel
from posekit_viewer.display_panel import DisplayPanel
from posekit_viewer.error_plot import ErrorPlot
from posekit_viewer.joint_panel import JointPanel
from posekit_viewer.limit_panel import LimitPanel
from posekit_viewer.scene_renderer import SceneRenderer
from posekit_viewer.session_panel import SessionPanel
from posekit_viewer.solver_panel import SolverPanel
from posekit_viewer.takes_panel import TakesPanel
from posekit_viewer.task_list_panel import TaskListPanel


class SessionPanels:
    """All panels of a session's viewer."""

    def __init__(
        self,
        server: viser.ViserServer,
        session: Session,
        link: str,
        renderer: SceneRenderer,
        on_frame: Callable[[Any], None],
        takes: TakeLibrary | None = None,
    ) -> None:
        self._server = server
        self._session = session
        self.session = SessionPanel(server, session, link, on_frame)
        self.tasks = TaskListPanel(server, session)
        self.add_task = AddTaskPanel(server, session)
        self.limits = LimitPanel(server, session)
        self.solver = SolverPanel(server, session)
        self.joints = JointPanel(server, session)
        self.display = DisplayPanel(server, renderer)
        self.errors = ErrorPlot(server)
        self.takes = TakesPanel(server, session, takes) if takes is not None else None

    def load_spec(self, content: bytes) -> None:
        """Replace the session with an uploaded spec (see :meth:`SessionPanel.load_spec`)."""
        self.session.load_spec(content)

    def record(self, state: SessionState) -> None:
        """Note a state the viewer drew (its solve time; cheap, called every frame)."""
        self.session.solve_times.record(state)

    def refresh(self, viewers: int) -> None:
        """Follow the session: task stack and values, limits, solver, joints, errors.

        One atomic update: browsers apply the panels' changes together.
        """
        state = self._session.state
        with self._server.atomic():
            self.session.refresh(viewers)
            self.tasks.refresh(state.errors)
            self.limits.refresh(state.limits)
            self.solver.refresh()
            self.joints.refresh(state.q)
            self.errors.set_tasks(tuple(spec.name or "" for spec in self._session.tasks()))
            self.errors.add(state.time, state.errors)
            if self.takes is not None:
                self.takes.refresh()
