"""The "Solver" panel: QP backend, solve and stream rates, damping, tolerance, pause.

Every widget patches the settings through :meth:`Session.set_solver` and follows
settings changed by REST clients or other viewers. Damping and tolerance span decades:
each is a log slider with its number field (:class:`~posekit_viewer.log_slider.LogSlider`).
"""

from __future__ import annotations

from typing import Any

import viser
from posekit.sessions.live.session import Session
from posekit.sessions.specs.solver_settings import available_solvers

from posekit_viewer.log_slider import LogSlider
from posekit_viewer.panel_support import Follower, apply_change, from_client

FIELDS = ("solver", "rate_hz", "stream_hz", "paused")
LOG_FIELDS = {"damping": (1e-7, 1.0), "tolerance": (1e-7, 1e-1)}  # slider ends


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
                "paused": gui.add_checkbox("paused", initial_value=settings.paused),
            }
            self.log_sliders = {
                field: self._log_slider(gui, field, getattr(settings, field), limits)
                for field, limits in LOG_FIELDS.items()
            }
        self._follower = Follower()
        for field, widget in self.widgets.items():
            self._bind(field, widget)

    def _log_slider(
        self, gui: viser.GuiApi, field: str, value: float, limits: tuple[float, float]
    ) -> LogSlider:
        return LogSlider(
            gui, field, value, *limits,
            on_change=lambda event, new: self._patch(event, field, new),
        )  # fmt: skip

    def _bind(self, field: str, widget: Any) -> None:
        @widget.on_update
        def _(event: Any) -> None:
            if from_client(event):
                self._patch(event, field, widget.value)

    def _patch(self, event: Any, field: str, value: Any) -> bool:
        """Change one setting as REST would; False (and a notification) when rejected."""
        change = apply_change(event.client, lambda: self._session.set_solver({field: value}))
        return change is not None

    def refresh(self) -> None:
        """Show the session's current settings."""
        settings = self._session.solver
        for field in FIELDS:
            self._follower.show(self.widgets[field], getattr(settings, field))
        for field, control in self.log_sliders.items():
            control.show(getattr(settings, field))
