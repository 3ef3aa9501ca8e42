"""The "Tasks" panel: per task, its costs and ``lm_damping`` (each a log-scale slider with
its number field, :class:`~posekit_viewer.log_slider.LogSlider`), gain, enabled, remove,
and the task's live error.

The folder is rebuilt when the task stack changes (a task added, removed, retyped or
given another role); otherwise the widgets follow values changed by REST clients or
other viewers without echoing them back.
"""

from __future__ import annotations

from typing import Any

import viser
from posekit.sessions.kinds import TASK_KINDS
from posekit.sessions.live.session import Session

from posekit_viewer.log_slider import LogSlider
from posekit_viewer.panel_support import Follower, apply_change, from_client

COST_RANGE = (1e-4, 1e3)  # slider ends; the number field takes any valid cost
LM_DAMPING_RANGE = (1e-4, 1e2)


def cost_fields(task_type: str) -> tuple[str, ...]:
    """The params of a task type that are costs (one slider each)."""
    return tuple(name for name in TASK_KINDS[task_type].params() if name.endswith("cost"))


def scalar_cost(value: Any) -> float:
    """A cost shown on one slider: scalars as they are, vectors and maps by their max."""
    if isinstance(value, dict):
        return float(max(value.values(), default=0.0))
    if isinstance(value, (list, tuple)):
        return float(max(value, default=0.0))
    return float(value)


class TaskListPanel:
    """One sub-folder of widgets per task of the session."""

    def __init__(self, server: viser.ViserServer, session: Session) -> None:
        self._server = server
        self._session = session
        self._folder = server.gui.add_folder("Tasks")
        self._structure: tuple[tuple[str, str, str], ...] | None = None
        self._folders: list[Any] = []
        self.widgets: dict[str, dict[str, Any]] = {}
        self._follower = Follower()

    def refresh(self, errors: dict[str, float | None]) -> None:
        """Follow the task stack, its values and the tasks' current errors."""
        specs = self._session.tasks()
        structure = tuple((s.name or "", s.type, str(s.role)) for s in specs)
        if structure != self._structure:
            self._structure = structure
            self._rebuild(specs)
        for spec in specs:
            widgets = self.widgets.get(spec.name or "")
            if widgets is None:
                continue
            error = errors.get(spec.name or "")
            widgets["error"].content = "error: –" if error is None else f"error: {error:.2e}"
            self._follow(spec, widgets)

    def _rebuild(self, specs: list[Any]) -> None:
        for folder in self._folders:
            folder.remove()
        self._folders = []
        self.widgets = {}
        with self._folder:
            for spec in specs:
                folder = self._server.gui.add_folder(f"{spec.name} ({spec.type})")
                self._folders.append(folder)
                with folder:
                    self.widgets[spec.name] = self._controls(spec)

    def _controls(self, spec: Any) -> dict[str, Any]:
        gui = self._server.gui
        name, params = spec.name, spec.params
        widgets: dict[str, Any] = {"error": gui.add_markdown("error: –")}
        for field in cost_fields(spec.type):
            if hasattr(params, field):
                value = scalar_cost(getattr(params, field))
                widgets[field] = self._log_slider(name, field, value, COST_RANGE)
        if hasattr(params, "gain"):
            gain = gui.add_slider(
                "gain", min=0.0, max=1.0, step=0.01, initial_value=float(params.gain)
            )
            self._bind_patch(name, "gain", gain)
            widgets["gain"] = gain
        if hasattr(params, "lm_damping"):
            value = float(params.lm_damping)
            widgets["lm_damping"] = self._log_slider(name, "lm_damping", value, LM_DAMPING_RANGE)
        widgets["enabled"] = gui.add_checkbox("enabled", initial_value=spec.enabled)
        self._bind_patch(name, "enabled", widgets["enabled"])
        widgets["remove"] = gui.add_button("Remove", color="red")

        @widgets["remove"].on_click
        def _(event: Any) -> None:
            apply_change(event.client, lambda: self._session.remove_task(name))

        return widgets

    def _log_slider(
        self, name: str, field: str, value: float, limits: tuple[float, float]
    ) -> LogSlider:
        """A log slider with its number field that patches ``field`` of task ``name``."""
        return LogSlider(
            self._server.gui, field, value, *limits,
            on_change=lambda event, new: self._patch(event, name, {field: new}),
        )  # fmt: skip

    def _bind_patch(self, name: str, field: str, widget: Any) -> None:
        @widget.on_update
        def _(event: Any) -> None:
            if from_client(event):
                self._patch(event, name, {field: widget.value})

    def _patch(self, event: Any, name: str, fields: dict[str, Any]) -> bool:
        """PATCH the task as REST would; False (and a notification) when rejected."""
        return (
            apply_change(event.client, lambda: self._session.patch_task(name, fields)) is not None
        )

    def _follow(self, spec: Any, widgets: dict[str, Any]) -> None:
        """Show values changed by REST clients or other viewers."""
        show = self._follower.show
        for field in cost_fields(spec.type):
            if field in widgets:
                widgets[field].show(scalar_cost(getattr(spec.params, field)))
        if "lm_damping" in widgets:
            widgets["lm_damping"].show(float(spec.params.lm_damping))
        if "gain" in widgets:
            show(widgets["gain"], float(spec.params.gain))
        show(widgets["enabled"], spec.enabled)
