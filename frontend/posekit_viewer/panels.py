"""The viewer's GUI panels, acting through the same :class:`Session` methods as REST.

Panels: session (viewers, link, status, solve time, keyframe reset, save/load spec),
tasks (per task: cost sliders with exact number inputs, gain, lm_damping, enabled,
remove, live error), add task, limits, solver, joints (manual posing) and an error
plot. Everything a panel changes is validated by the session; a rejected change shows
a notification to the viewer who made it and leaves the session as it was.
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import mujoco
import numpy as np
import qpsolvers
import viser
import viser.uplot
from posekit import PosekitError
from posekit.sessions.session import Session
from pydantic import ValidationError

logger = logging.getLogger(__name__)

ADDABLE_TASKS = ("frame", "look_at", "axis_align", "com", "posture", "damping", "relative_frame")
SCALAR_COSTS = {
    "frame": ("position_cost", "orientation_cost"),
    "relative_frame": ("position_cost", "orientation_cost"),
    "com": ("cost",),
    "look_at": ("cost",),
    "axis_align": ("cost",),
    "posture": ("cost",),
    "damping": ("cost",),
    "kinetic_energy": ("cost",),
    "equality": ("cost",),
}
COST_SLIDER_MAX = 10.0
PLOT_SECONDS = 10.0
PLOT_POINTS = 300
Rejected = (PosekitError, ValidationError, ValueError, KeyError, LookupError)


def _names(model: mujoco.MjModel, obj: mujoco.mjtObj, count: int) -> list[str]:
    names = [mujoco.mj_id2name(model, obj, i) for i in range(count)]
    return [name for name in names if name]


def _scalar(value: Any) -> float:
    """A cost shown on one slider: scalars as they are, vectors and maps by their max."""
    if isinstance(value, dict):
        return float(max(value.values(), default=0.0))
    if isinstance(value, (list, tuple)):
        return float(max(value, default=0.0))
    return float(value)


class SessionPanels:
    """GUI of one session's viewer (shared by everyone watching it)."""

    def __init__(self, server: viser.ViserServer, session: Session, link: str) -> None:
        self._server = server
        self._session = session
        self._model = session.model
        self._link = link
        self._structure: Any = None
        self._task_widgets: dict[str, dict[str, Any]] = {}
        self._task_folders: list[Any] = []
        self._joint_sliders: dict[str, Any] = {}
        self._joint_editing_until = 0.0
        self._history: deque[tuple[float, dict[str, float | None]]] = deque(maxlen=PLOT_POINTS)
        self._plot: Any = None
        self._plot_tasks: tuple[str, ...] = ()
        gui = server.gui
        self._build_session_panel(gui)
        self._tasks_folder = gui.add_folder("Tasks")
        self._build_add_task(gui)
        self._build_limits(gui)
        self._build_solver(gui)
        self._build_joints(gui)
        self._plot_folder = gui.add_folder("Errors")

    # ============================================================ helpers
    def _apply(self, client: Any, action: Callable[[], Any]) -> Any:
        """Run a session change; a rejection is shown to ``client`` and changes nothing."""
        try:
            return action()
        except Rejected as error:
            message = str(error) if not isinstance(error, ValidationError) else _short(error)
            logger.info("viewer change rejected: %s", message)
            if client is not None:
                client.add_notification("Rejected", message, color="red", auto_close_seconds=6.0)
            return None

    # ============================================================ session
    def _build_session_panel(self, gui: Any) -> None:
        with gui.add_folder("Session"):
            self.viewers = gui.add_markdown("**Viewers:** 0")
            gui.add_markdown(f"**Link:** [{self._link}]({self._link})")
            self.share = gui.add_text("Share link (select, copy)", initial_value=self._link)
            self.status = gui.add_markdown("**Status:** starting")
            keyframes = _names(self._model, mujoco.mjtObj.mjOBJ_KEY, self._model.nkey)
            self.keyframe = gui.add_dropdown("Keyframe", keyframes or ("(none)",))
            reset = gui.add_button("Reset to keyframe", disabled=not keyframes)
            save = gui.add_button("Save spec")
            self.load = gui.add_upload_button("Load spec", mime_type="application/json")

        @reset.on_click
        def _(event: Any) -> None:
            self._apply(event.client, lambda: self._session.set_q(keyframe=self.keyframe.value))

        @save.on_click
        def _(event: Any) -> None:
            spec = self._session.spec().model_dump(mode="json")
            payload = json.dumps(spec, indent=2).encode()
            event.client.send_file_download(f"posekit-{self._session.id}.json", payload)

        @self.load.on_upload
        def _(event: Any) -> None:
            self._apply(event.client, lambda: self.load_spec(self.load.value.content))

    def load_spec(self, content: bytes) -> None:
        """Replace this session's q, tasks, limits and solver with an uploaded spec.

        The spec is validated completely (parsed, and every task and limit built on a
        scratch session) before anything here changes.
        """
        from posekit.sessions.session_spec import SessionSpec

        spec = SessionSpec.model_validate_json(content)
        if spec.robot != self._session.robot:
            raise ValueError(
                f"the spec is for robot {spec.robot!r}, this session is on {self._session.robot!r}"
            )
        self._session.replace_spec(spec)

    # ============================================================== tasks
    def _rebuild_tasks(self) -> None:
        for folder in self._task_folders:
            folder.remove()
        self._task_folders = []
        self._task_widgets = {}
        with self._tasks_folder:
            for spec in self._session.tasks():
                folder = self._server.gui.add_folder(f"{spec.name} ({spec.type})")
                self._task_folders.append(folder)
                with folder:
                    self._task_widgets[spec.name] = self._task_controls(spec)

    def _task_controls(self, spec: Any) -> dict[str, Any]:
        gui = self._server.gui
        name = spec.name
        params = spec.params
        widgets: dict[str, Any] = {"error": gui.add_markdown("error: –")}
        for field in SCALAR_COSTS.get(spec.type, ()):
            value = _scalar(getattr(params, field))
            slider = gui.add_slider(
                field,
                min=0.0,
                max=COST_SLIDER_MAX,
                step=1e-3,
                initial_value=min(value, COST_SLIDER_MAX),
            )
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
        enabled = gui.add_checkbox("enabled", initial_value=spec.enabled)
        self._bind_patch(name, "enabled", enabled)
        remove = gui.add_button("Remove", color="red")

        @remove.on_click
        def _(event: Any) -> None:
            self._apply(event.client, lambda: self._session.remove_task(name))

        widgets["enabled"] = enabled
        return widgets

    def _bind_cost(self, name: str, field: str, slider: Any, number: Any) -> None:
        @slider.on_update
        def _(event: Any) -> None:
            if event.client is None:
                return
            if self._apply(event.client, lambda: self._patch(name, {field: slider.value})):
                number.value = slider.value

        @number.on_update
        def _(event: Any) -> None:
            if event.client is None:
                return
            if self._apply(event.client, lambda: self._patch(name, {field: number.value})):
                slider.value = min(float(number.value), COST_SLIDER_MAX)

    def _bind_patch(self, name: str, field: str, widget: Any) -> None:
        @widget.on_update
        def _(event: Any) -> None:
            if event.client is not None:
                self._apply(event.client, lambda: self._patch(name, {field: widget.value}))

    def _patch(self, name: str, fields: dict[str, Any]) -> bool:
        self._session.patch_task(name, fields)
        return True

    def _build_add_task(self, gui: Any) -> None:
        model = self._model
        frames = {
            "site": _names(model, mujoco.mjtObj.mjOBJ_SITE, model.nsite),
            "body": _names(model, mujoco.mjtObj.mjOBJ_BODY, model.nbody),
            "geom": _names(model, mujoco.mjtObj.mjOBJ_GEOM, model.ngeom),
        }
        with gui.add_folder("Add task", expand_by_default=False):
            task_type = gui.add_dropdown("Type", ADDABLE_TASKS)
            frame_type = gui.add_dropdown("Frame type", ("site", "body", "geom"))
            frame = gui.add_dropdown("Frame", frames["site"] or frames["body"])
            root = gui.add_dropdown("Root (relative)", frames["body"])
            role = gui.add_dropdown("Role", ("objective", "constraint"))
            add = gui.add_button("Add")

        @frame_type.on_update
        def _(_: Any) -> None:
            options = frames[frame_type.value] or ["(none)"]
            frame.options = options
            frame.value = options[0]

        @add.on_click
        def _(event: Any) -> None:
            spec: dict[str, Any] = {"type": task_type.value, "role": role.value}
            if task_type.value in ("frame", "look_at", "axis_align", "relative_frame"):
                spec["params"] = {"frame": frame.value, "frame_type": frame_type.value}
                if task_type.value == "look_at":
                    spec["params"]["axis"] = [0.0, 0.0, -1.0] if "cam" in frame.value else [
                        0.0, 0.0, 1.0
                    ]  # fmt: skip
                if task_type.value == "relative_frame":
                    spec["params"].update({"root": root.value, "root_type": "body"})
            self._apply(event.client, lambda: self._session.add_task(spec))

    # ============================================================= limits
    def _build_limits(self, gui: Any) -> None:
        names = {spec.type: spec.name for spec in self._session.limits()}
        bodies = _names(self._model, mujoco.mjtObj.mjOBJ_BODY, self._model.nbody)
        with gui.add_folder("Limits", expand_by_default=False):
            configuration = gui.add_checkbox("Joint ranges", initial_value="configuration" in names)
            velocity = gui.add_number(
                "Max joint speed [rad/s] (0 = off)", initial_value=0.0, min=0.0
            )
            gui.add_markdown("Collision avoidance between two bodies:")
            first = gui.add_dropdown("Body A", bodies)
            second = gui.add_dropdown("Body B", bodies[1:] or bodies)
            add_pair = gui.add_button("Avoid A–B")

        @configuration.on_update
        def _(event: Any) -> None:
            if event.client is None:
                return
            current = {spec.type: spec.name for spec in self._session.limits()}
            if configuration.value and "configuration" not in current:
                self._apply(
                    event.client, lambda: self._session.add_limit({"type": "configuration"})
                )
            elif not configuration.value and "configuration" in current:
                self._apply(
                    event.client, lambda: self._session.remove_limit(current["configuration"])
                )

        @velocity.on_update
        def _(event: Any) -> None:
            if event.client is None:
                return
            current = {spec.type: spec.name for spec in self._session.limits()}
            speed = float(velocity.value)

            def change() -> None:
                if "velocity" in current:
                    self._session.remove_limit(current["velocity"])
                if speed > 0.0:
                    joints = [
                        self._model.joint(j).name
                        for j in range(self._model.njnt)
                        if int(self._model.jnt_type[j]) in (2, 3) and self._model.joint(j).name
                    ]
                    self._session.add_limit(
                        {"type": "velocity", "params": {"velocities": dict.fromkeys(joints, speed)}}
                    )

            self._apply(event.client, change)

        @add_pair.on_click
        def _(event: Any) -> None:
            spec = {
                "type": "collision_avoidance",
                "name": f"avoid_{first.value}_{second.value}".replace("/", "_"),
                "params": {
                    "geom_pairs": [[[first.value], [second.value]]],
                    "minimum_distance_from_collisions": 0.01,
                    "collision_detection_distance": 0.05,
                },
            }
            self._apply(event.client, lambda: self._session.add_limit(spec))

    # ============================================================= solver
    def _build_solver(self, gui: Any) -> None:
        settings = self._session.solver
        with gui.add_folder("Solver", expand_by_default=False):
            solver = gui.add_dropdown(
                "QP solver", tuple(qpsolvers.available_solvers), initial_value=settings.solver
            )
            rate = gui.add_slider(
                "rate_hz", min=1.0, max=240.0, step=1.0, initial_value=float(settings.rate_hz)
            )
            damping = gui.add_number(
                "damping", initial_value=float(settings.damping), min=0.0, step=1e-6
            )
            tolerance = gui.add_number(
                "tolerance", initial_value=float(settings.tolerance), min=1e-9, step=1e-5
            )
            paused = gui.add_checkbox("paused", initial_value=bool(settings.paused))
        for field, widget in (
            ("solver", solver), ("rate_hz", rate), ("damping", damping),
            ("tolerance", tolerance), ("paused", paused),
        ):  # fmt: skip
            self._bind_solver(field, widget)

    def _bind_solver(self, field: str, widget: Any) -> None:
        @widget.on_update
        def _(event: Any) -> None:
            if event.client is not None:
                self._apply(event.client, lambda: self._session.set_solver({field: widget.value}))

    # ============================================================= joints
    def _build_joints(self, gui: Any) -> None:
        model = self._model
        with gui.add_folder("Joints", expand_by_default=False):
            for j in range(model.njnt):
                if int(model.jnt_type[j]) not in (2, 3):  # hinge, slide
                    continue
                name = model.joint(j).name or f"joint {j}"
                low, high = model.jnt_range[j] if model.jnt_limited[j] else (-np.pi, np.pi)
                slider = gui.add_slider(
                    name, min=float(low), max=float(high), step=1e-3, initial_value=float(low)
                )
                self._bind_joint(int(model.jnt_qposadr[j]), slider)
                self._joint_sliders[name] = (int(model.jnt_qposadr[j]), slider)

    def _bind_joint(self, address: int, slider: Any) -> None:
        @slider.on_update
        def _(event: Any) -> None:
            if event.client is None:
                return
            self._joint_editing_until = time.monotonic() + 1.0
            q = np.array(self._session.q)
            q[address] = slider.value
            self._apply(event.client, lambda: self._session.set_q(q))

    # ============================================================ refresh
    def refresh(self, viewers: int) -> None:
        """Follow the session: task stack, widget values, errors, joints and the plot."""
        specs = self._session.tasks()
        structure = tuple((s.name, s.type, s.role) for s in specs)
        if structure != self._structure:
            self._structure = structure
            self._rebuild_tasks()
            self._rebuild_plot()
        state = self._session.state
        self.viewers.content = f"**Viewers:** {viewers}"
        line = f"**Status:** {state.status} · step {state.seq} · solve {state.solve_us:.0f} µs"
        if state.error:
            line += f"\n\n⚠ {state.error}"
        self.status.content = line
        for spec in specs:
            widgets = self._task_widgets.get(spec.name)
            if widgets is None:
                continue
            error = state.errors.get(spec.name)
            widgets["error"].content = "error: –" if error is None else f"error: {error:.2e}"
            self._follow_values(spec, widgets)
        if time.monotonic() > self._joint_editing_until:
            for address, slider in self._joint_sliders.values():
                value = float(state.q[address])
                if abs(slider.value - value) > 1e-4:
                    slider.value = min(max(value, slider.min), slider.max)
        self._update_plot(state)

    def _follow_values(self, spec: Any, widgets: dict[str, Any]) -> None:
        """Show values changed by REST clients or other viewers."""
        for field in SCALAR_COSTS.get(spec.type, ()):
            slider, number = widgets[field]
            value = _scalar(getattr(spec.params, field))
            if abs(float(number.value) - value) > 1e-12:
                number.value = value
                slider.value = min(value, COST_SLIDER_MAX)
        for field in ("gain", "lm_damping"):
            if (
                field in widgets
                and abs(float(widgets[field].value) - float(getattr(spec.params, field))) > 1e-12
            ):
                widgets[field].value = float(getattr(spec.params, field))
        if widgets["enabled"].value != spec.enabled:
            widgets["enabled"].value = spec.enabled

    def _rebuild_plot(self) -> None:
        if self._plot is not None:
            self._plot.remove()
        self._plot_tasks = tuple(s.name for s in self._session.tasks())
        self._history.clear()
        with self._plot_folder:
            self._plot = self._server.gui.add_uplot(
                data=(np.zeros(1), *[np.zeros(1) for _ in self._plot_tasks]),
                series=(
                    viser.uplot.Series(label="t [s]"),
                    *[
                        viser.uplot.Series(label=name, stroke=_color(i), width=2)
                        for i, name in enumerate(self._plot_tasks)
                    ],
                ),
                scales={"y": viser.uplot.Scale(distr=3)},
                title="task error norms",
                aspect=1.6,
            )

    def _update_plot(self, state: Any) -> None:
        if self._plot is None or not self._plot_tasks:
            return
        if self._history and self._history[-1][0] == state.time:
            return
        self._history.append((state.time, state.errors))
        start = self._history[-1][0] - PLOT_SECONDS
        rows = [(t, errors) for t, errors in self._history if t >= start]
        times = np.array([t - rows[-1][0] for t, _ in rows])
        columns = [
            np.array([max(float(errors.get(name) or 0.0), 1e-9) for _, errors in rows])
            for name in self._plot_tasks
        ]
        self._plot.data = (times, *columns)


def _color(index: int) -> str:
    palette = ("#1f5eea", "#ec1c24", "#0c0", "#f9a10b", "#8e44ad", "#16a085", "#7f8c8d")
    return palette[index % len(palette)]


def _short(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ()))
    return f"{where}: {first.get('msg', 'invalid')}" if where else first.get("msg", "invalid")
