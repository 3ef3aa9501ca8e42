"""The "Takes" panel: record a take, and compare it replayed through one other weight.

Record starts a take of everything the session is given (drags included), Stop keeps
it (:mod:`posekit.sessions.takes`). Compare replays the chosen take twice — as recorded,
and with one task's weight changed — and overlays that task's error norm of both over
the take's time, with each one's RMS and largest error: the same replay and figures as
``POST …/takes/{take}/compare``.
"""

from __future__ import annotations

import secrets
from typing import Any

import numpy as np
import viser
import viser.uplot
from posekit.ik.exceptions import PosekitError
from posekit.sessions.kinds import TaskPatch
from posekit.sessions.live.session import Session
from posekit.sessions.takes.library import TakeLibrary
from posekit.sessions.takes.replay import replay
from posekit.sessions.takes.summary import summarize
from pydantic import ValidationError

from posekit_viewer.error_plot import FLOOR, PALETTE

WEIGHTS = ("orientation_cost", "position_cost", "cost", "lm_damping", "gain")
NONE = "(no take yet)"


class TakesPanel:
    """Record, pick and compare takes (module docstring)."""

    def __init__(self, server: viser.ViserServer, session: Session, takes: TakeLibrary) -> None:
        self._server, self._session, self._takes = server, session, takes
        gui = server.gui
        self._folder = gui.add_folder("Takes", expand_by_default=False)
        with self._folder:
            self.record = gui.add_button("Record take")
            self.take = gui.add_dropdown("Take", options=(NONE,))
            self.task = gui.add_dropdown("Task", options=self._task_names())
            self.weight = gui.add_dropdown("Weight", options=WEIGHTS)
            self.value = gui.add_number("Value", initial_value=0.01, min=0.0, step=0.001)
            self.compare = gui.add_button("Compare")
            self.message = gui.add_markdown("")
        self.plot: Any = None
        self.record.on_click(lambda _: self._toggle())
        self.compare.on_click(lambda _: self._compare())

    def refresh(self) -> None:
        """Follow the session: recording or not, its takes, its tasks."""
        recording = self._session.recording is not None
        self.record.label = "Stop take" if recording else "Record take"
        names = tuple(
            f"{info.id} {info.name}".strip() for info in self._takes.infos(self._session.id)
        )
        if names and tuple(self.take.options) != names:
            self.take.options = names
        tasks = self._task_names()
        if tuple(self.task.options) != tasks:
            self.task.options = tasks

    def _task_names(self) -> tuple[str, ...]:
        return tuple(spec.name or "" for spec in self._session.tasks()) or ("",)

    def _toggle(self) -> None:
        try:
            if self._session.recording is None:
                self._session.start_take(secrets.token_urlsafe(8), "viewer")
                self.message.content = "Recording: every drag and change from now on."
            else:
                info = self._takes.add(
                    self._session.id, self._session.robot, self._session.stop_take()
                )
                self.message.content = (
                    f"Take `{info.id}` kept: {info.steps} steps, {info.events} inputs."
                )
        except PosekitError as exc:
            self.message.content = f"⚠ {exc}"
        self.refresh()

    def _compare(self) -> None:
        if self.take.value == NONE:
            self.message.content = "⚠ record a take first"
            return
        task, weight, value = self.task.value, self.weight.value, float(self.value.value)
        try:
            take = self._takes.get(self._session.id, self.take.value.split()[0])
            patch = TaskPatch.model_validate({weight: value})
            model, entry = self._session.model, self._session.entry
            recorded = replay(take, model, entry)
            changed = replay(take, model, entry, tasks={task: patch})
        except (PosekitError, ValidationError) as exc:
            self.message.content = f"⚠ {exc}"
            return
        label = f"{weight} = {value:g}"
        figures = [summarize(model, recorded, "as recorded"), summarize(model, changed, label)]
        self._draw(
            task, [recorded.errors.get(task, []), changed.errors.get(task, [])], label, recorded.dt
        )
        self.message.content = "\n\n".join(
            f"**{f.label}**: `{task}` RMS {f.tasks[task].rms:.4g}, max {f.tasks[task].max:.4g}"
            for f in figures
            if task in f.tasks and f.tasks[task].rms is not None
        )

    def _draw(self, task: str, curves: list[list[float | None]], label: str, dt: float) -> None:
        """Both error curves of ``task`` over the take's time (log scale)."""
        steps = max(len(c) for c in curves)
        times = (np.arange(steps, dtype=np.float64) + 1.0) * dt
        data = [
            np.maximum(np.array([e or 0.0 for e in c], dtype=np.float64), FLOOR) for c in curves
        ]
        if self.plot is not None:
            self.plot.remove()
        with self._folder:
            self.plot = self._server.gui.add_uplot(
                data=(times, *data),
                series=(
                    viser.uplot.Series(label="t [s]"),
                    viser.uplot.Series(label="as recorded", stroke=PALETTE[0], width=2),
                    viser.uplot.Series(label=label, stroke=PALETTE[1], width=2),
                ),
                scales={"y": viser.uplot.Scale(distr=3)},
                title=f"{task} error norm, replayed",
                aspect=1.6,
            )
