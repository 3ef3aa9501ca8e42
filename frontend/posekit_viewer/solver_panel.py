"""The "Solver" panel: QP backend, solve and stream rates, damping, tolerance, pause.

Every widget patches the settings through :meth:`Session.set_solver` and follows
settings changed by REST clients or other viewers.
"""

from __future__ import annotations

from typing import Any

import viser
from posekit.sessions.session import Session
from posekit.sessions.solver_settings import available_solvers

from posekit_viewer.panel_support import Follower, apply_change, from_client

FIELDS = ("solver", "rate_hz", "stream_hz", "damping", "tolerance", "paused")


class SolverPanel:
    """Solver settings of the session."""

    def __init__(self, server: viser.ViserServer, session: Session) -> None:
        self._session = session
        settings = session.solver
        solvers = tuple(sorted({*available_solvers(), settings.solver}))
        gui = server.gui
        with gui.add_folder("Solver", expand_by_default=False):
            self.widgets: dict[str, Any] = {
                "solver": gui.add_dropdown("QP solver", solvers, initial_value=settings.solver),
                "rate_hz": gui.add_slider(
                    "rate_hz", min=1.0, max=240.0, step=1.0, initial_value=settings.rate_hz
                ),
                "stream_hz": gui.add_slider(
                    "stream_hz", min=1.0, max=240.0, step=1.0, initial_value=settings.stream_hz
                ),
                "damping": gui.add_number(
                    "damping", initial_value=settings.damping, min=0.0, step=1e-6
                ),
                "tolerance": gui.add_number(
                    "tolerance", initial_value=settings.tolerance, min=1e-9, step=1e-6
                ),
                "paused": gui.add_checkbox("paused", initial_value=settings.paused),
            }
        self._follower = Follower()
        for field, widget in self.widgets.items():
            self._bind(field, widget)

    def _bind(self, field: str, widget: Any) -> None:
        @widget.on_update
        def _(event: Any) -> None:
            if from_client(event):
                apply_change(event.client, lambda: self._session.set_solver({field: widget.value}))

    def refresh(self) -> None:
        """Show the session's current settings."""
        settings = self._session.solver
        for field in FIELDS:
            self._follower.show(self.widgets[field], getattr(settings, field))
