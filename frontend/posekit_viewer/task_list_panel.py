"""The "Tasks" panel: per task, cost sliders with exact number inputs, gain, lm_damping,
enabled, remove, and the task's live error.

The folder is rebuilt when the task stack changes (a task added, removed, retyped or
given another role); otherwise the widgets follow values changed by REST clients or
other viewers without echoing them back.
"""

from __future__ import annotations

from typing import Any

import viser
from posekit.sessions.kinds import TASK_KINDS
from posekit.sessions.session import Session

from posekit_viewer.panel_support import Follower, apply_change, from_client


def cost_fields(task_type: str) -> tuple[str, ...]:
    """The params of a task type that are costs (one slider each)."""
    return tuple(name for name in TASK_KINDS[task_type].params() if name.endswith("cost"))

COST_SLIDER_MAX = 10.0


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
            if not hasattr(params, field):
                continue
            value = scalar_cost(getattr(params, field))
            slider = gui.add_slider(
                field, min=0.0, max=COST_SLIDER_MAX, step=1e-3,
                initial_value=min(value, COST_SLIDER_MAX),
            )  # fmt: skip
            number = gui.add_number(f"{field} (exact)", initial_value=value, min=0.0, step=1e-4)
            widgets[field] = (slider, number)
            self._bind_cost(name, field, slider, number)
        if hasattr(params, "gain"):
            gain = gui.add_slider(
                "gain", min=0.0, max=1.0, step=0.01, initial_value=float(params.gain)
            )
            self._bind_patch(name, "gain", gain)
            widgets["gain"] = gain
        if hasattr(params, "lm_damping"):
            damping = gui.add_number(
                "lm_damping", initial_value=float(params.lm_damping), min=0.0, step=1e-4
            )
            self._bind_patch(name, "lm_damping", damping)
            widgets["lm_damping"] = damping
        widgets["enabled"] = gui.add_checkbox("enabled", initial_value=spec.enabled)
        self._bind_patch(name, "enabled", widgets["enabled"])
        widgets["remove"] = gui.add_button("Remove", color="red")

        @widgets["remove"].on_click
        def _(event: Any) -> None:
            apply_change(event.client, lambda: self._session.remove_task(name))

        return widgets

    def _bind_cost(self, name: str, field: str, slider: Any, number: Any) -> None:
        """Slider and exact number both patch the cost, and show each other's value."""

        @slider.on_update
        def _(event: Any) -> None:
            if from_client(event) and self._patch(event, name, {field: slider.value}):
                number.value = slider.value

        @number.on_update
        def _(event: Any) -> None:
            if from_client(event) and self._patch(event, name, {field: number.value}):
                slider.value = min(float(number.value), COST_SLIDER_MAX)

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
                slider, number = widgets[field]
                value = scalar_cost(getattr(spec.params, field))
                show(number, value)
                show(slider, min(value, COST_SLIDER_MAX))
        for field in ("gain", "lm_damping"):
            if field in widgets:
                show(widgets[field], float(getattr(spec.params, field)))
        show(widgets["enabled"], spec.enabled)
