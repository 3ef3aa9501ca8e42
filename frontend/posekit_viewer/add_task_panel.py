"""The "Add task" panel: task type, frame (from the model's sites, bodies or geoms),
root frame for relative tasks, pointing axis, and role (objective or hard constraint).

The new task gets its target from the current configuration (as over REST), so it
starts satisfied and its gizmo appears where the robot is.
"""

from __future__ import annotations

from typing import Any

import mujoco
import viser
from posekit.sessions.kinds import TASK_KINDS
from posekit.sessions.live.session import Session

from posekit_viewer.panel_support import apply_change, object_names

FORM_PARAMS = frozenset({"frame", "frame_type", "root", "root_type", "axis"})
"""The params this form can fill in; other params keep their defaults."""


ADDABLE_TASKS = tuple(
    task_type
    for task_type in TASK_KINDS
    if {name for name, required in TASK_KINDS[task_type].params().items() if required}
    <= FORM_PARAMS
)
"""Task types whose required params this form can give (not, e.g., ``dof_freezing``)."""
FRAME_TYPES = ("site", "body", "geom")
AXES = {
    "auto": None,  # -z for cameras (MuJoCo cameras look along -z), else +z
    "+z": [0.0, 0.0, 1.0], "-z": [0.0, 0.0, -1.0],
    "+x": [1.0, 0.0, 0.0], "-x": [-1.0, 0.0, 0.0],
    "+y": [0.0, 1.0, 0.0], "-y": [0.0, -1.0, 0.0],
}  # fmt: skip


def pointing_axis(choice: str, frame: str) -> list[float]:
    """The frame axis a look-at or axis-align task points."""
    axis = AXES[choice]
    if axis is not None:
        return axis
    return [0.0, 0.0, -1.0] if "cam" in frame.lower() else [0.0, 0.0, 1.0]


class AddTaskPanel:
    """Form that adds a task to the session through :meth:`Session.add_task`."""

    def __init__(self, server: viser.ViserServer, session: Session) -> None:
        self._session = session
        model = session.model
        self._frames = {
            "site": object_names(model, mujoco.mjtObj.mjOBJ_SITE, model.nsite),
            "body": object_names(model, mujoco.mjtObj.mjOBJ_BODY, model.nbody),
            "geom": object_names(model, mujoco.mjtObj.mjOBJ_GEOM, model.ngeom),
        }
        first_type = next((kind for kind in FRAME_TYPES if self._frames[kind]), "body")
        gui = server.gui
        with gui.add_folder("Add task", expand_by_default=False):
            self.task_type = gui.add_dropdown("Type", ADDABLE_TASKS)
            self.frame_type = gui.add_dropdown("Frame type", FRAME_TYPES, initial_value=first_type)
            self.frame = gui.add_dropdown("Frame", self._frames[first_type] or ("(none)",))
            self.root = gui.add_dropdown("Root (relative)", self._frames["body"])
            self.axis = gui.add_dropdown("Axis (pointing)", tuple(AXES))
            self.role = gui.add_dropdown("Role", ("objective", "constraint"))
            self.add = gui.add_button("Add")
        self._bind()

    def _bind(self) -> None:
        @self.frame_type.on_update
        def _(_: Any) -> None:
            options = self._frames[self.frame_type.value] or ["(none)"]
            self.frame.options = options
            self.frame.value = options[0]  # type: ignore[misc]  # viser 1.1: setter typed read-only

        @self.add.on_click
        def _(event: Any) -> None:
            apply_change(event.client, lambda: self._session.add_task(self.spec()))

    def spec(self) -> dict[str, Any]:
        """The task spec the form describes (validated by the session when added)."""
        task_type = self.task_type.value
        spec: dict[str, Any] = {"type": task_type, "role": self.role.value}
        takes = TASK_KINDS[task_type].params()
        if "frame" in takes:
            params: dict[str, Any] = {
                "frame": self.frame.value,
                "frame_type": self.frame_type.value,
            }
            if "axis" in takes:
                params["axis"] = pointing_axis(self.axis.value, self.frame.value)
            if "root" in takes:
                params.update({"root": self.root.value, "root_type": "body"})
            spec["params"] = params
        return spec
