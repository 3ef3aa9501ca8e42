"""The "Errors" panel: a live uPlot of every task's error norm over the last seconds."""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np
import viser
import viser.uplot

PLOT_SECONDS = 10.0
PLOT_POINTS = 200
FLOOR = 1e-9  # log scale: zero errors are drawn at this value
PALETTE = ("#1f5eea", "#ec1c24", "#0c0", "#f9a10b", "#8e44ad", "#16a085", "#7f8c8d")


class ErrorPlot:
    """Error norms per task (log scale) against time, newest at t = 0."""

    def __init__(self, server: viser.ViserServer) -> None:
        self._server = server
        self._folder = server.gui.add_folder("Errors")
        self._history: deque[tuple[float, ...]] = deque(maxlen=PLOT_POINTS)  # (t, errors…)
        self.plot: Any = None
        self.tasks: tuple[str, ...] = ()

    def set_tasks(self, names: tuple[str, ...]) -> None:
        """Start a new plot for these tasks (when the task stack changed)."""
        if names == self.tasks and self.plot is not None:
            return
        if self.plot is not None:
            self.plot.remove()
        self.tasks = names
        self._history.clear()
        with self._folder:
            self.plot = self._server.gui.add_uplot(
                data=(np.zeros(1), *[np.zeros(1) for _ in names]),
                series=(
                    viser.uplot.Series(label="t [s]"),
                    *[
                        viser.uplot.Series(label=name, stroke=PALETTE[i % len(PALETTE)], width=2)
                        for i, name in enumerate(names)
                    ],
                ),
                scales={"y": viser.uplot.Scale(distr=3)},
                title="task error norms",
                aspect=1.6,
            )

    def add(self, time: float, errors: dict[str, float | None]) -> None:
        """Append the errors of the state computed at ``time`` and redraw."""
        if self.plot is None or not self.tasks:
            return
        if self._history and self._history[-1][0] == time:
            return
        self._history.append((time, *[errors.get(name) or 0.0 for name in self.tasks]))
        rows = np.array(self._history, dtype=np.float64)
        rows = rows[rows[:, 0] >= time - PLOT_SECONDS]
        times = (rows[:, 0] - time).astype(np.float32)
        series = np.ascontiguousarray(np.maximum(rows[:, 1:], FLOOR).T, dtype=np.float32)
        self.plot.data = (times, *series)
