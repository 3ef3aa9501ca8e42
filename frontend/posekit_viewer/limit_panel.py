"""The "Limits" panel: joint ranges, a joint speed limit, collision avoidance between a
picked pair of bodies or geoms, and the list of the session's limits (enable, remove).

Like the task list, the widgets follow limits changed by REST clients or other viewers.
"""

from __future__ import annotations

import re
from typing import Any

import mujoco
import viser
from posekit.sessions.kinds.velocity_limit import VelocityLimitSpec
from posekit.sessions.live.session import Session

from posekit_viewer.panel_support import (
    Follower,
    apply_change,
    from_client,
    object_names,
    scalar_joints,
)
from posekit_viewer.typed_number import add_typed_number

DEFAULT_MIN_DISTANCE = 0.01  # [m]
DETECTION_MARGIN = 0.04  # [m] detection distance beyond the minimum distance


def limit_name(text: str) -> str:
    """``text`` made a valid session name (letters, digits, ``_ . -``; 64 characters)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:64]


def collision_spec(first: str, second: str, min_distance: float) -> dict[str, Any]:
    """A collision-avoidance limit keeping ``first`` and ``second`` (bodies or geoms) apart."""
    return {
        "type": "collision_avoidance",
        "name": limit_name(f"avoid_{first}_{second}"),
        "params": {
            "geom_pairs": [[[first], [second]]],
            "minimum_distance_from_collisions": min_distance,
            "collision_detection_distance": min_distance + DETECTION_MARGIN,
        },
    }


class LimitPanel:
    """Limit toggles, the collision pair picker and the list of active limits."""

    def __init__(self, server: viser.ViserServer, session: Session) -> None:
        self._server = server
        self._session = session
        model = session.model
        self._joints = [model.joint(j).name for j in scalar_joints(model) if model.joint(j).name]
        self._candidates = {
            "body": object_names(model, mujoco.mjtObj.mjOBJ_BODY, model.nbody),
            "geom": object_names(model, mujoco.mjtObj.mjOBJ_GEOM, model.ngeom),
        }
        bodies = self._candidates["body"] or ["(none)"]
        gui = server.gui
        with gui.add_folder("Limits", expand_by_default=False):
            self.binding = gui.add_markdown("")
            """Which limits hold which joints after the latest step."""
            self.joint_ranges = gui.add_checkbox("Joint ranges", initial_value=False)
            self._typed_speed = add_typed_number(
                gui, "Max joint speed [rad/s] (0 = off)", 0.0, self._typed_max_speed,
                min=0.0, step=0.1,
            )  # fmt: skip
            self.max_speed = self._typed_speed.widget
            gui.add_markdown("**Collision avoidance** between:")
            self.pair_kind = gui.add_dropdown("Pair of", ("body", "geom"))
            self.first = gui.add_dropdown("A", bodies)
            self.second = gui.add_dropdown("B", bodies, initial_value=bodies[-1])
            self.min_distance = gui.add_number(
                "Min distance [m]", initial_value=DEFAULT_MIN_DISTANCE, min=0.0, step=1e-3
            )
            self.add_pair = gui.add_button("Avoid A–B")
            self._list = gui.add_folder("Active limits")
        self._structure: tuple[tuple[str, str], ...] | None = None
        self._rows: list[Any] = []
        self.enabled: dict[str, Any] = {}
        self._follower = Follower()
        self._bind()

    # -------------------------------------------------------------- editing
    def _bind(self) -> None:
        session = self._session

        @self.joint_ranges.on_update
        def _(event: Any) -> None:
            if from_client(event):
                apply_change(event.client, lambda: self._set_joint_ranges(self.joint_ranges.value))

        @self.pair_kind.on_update
        def _(_: Any) -> None:
            options = self._candidates[self.pair_kind.value] or ["(none)"]
            self.first.options = options
            self.second.options = options
            self.first.value = options[0]  # type: ignore[misc]  # viser 1.1: setter typed read-only
            self.second.value = options[-1]  # type: ignore[misc]  # viser 1.1: setter typed read-only

        @self.add_pair.on_click
        def _(event: Any) -> None:
            spec = collision_spec(
                self.first.value, self.second.value, float(self.min_distance.value)
            )
            apply_change(event.client, lambda: session.add_limit(spec))

    def _of_type(self, kind: str) -> list[Any]:
        return [spec for spec in self._session.limits() if spec.type == kind]

    def _set_joint_ranges(self, on: bool) -> None:
        present = self._of_type("configuration")
        if on and not present:
            self._session.add_limit({"type": "configuration"})
        elif not on:
            for spec in present:
                self._session.remove_limit(spec.name)

    def _typed_max_speed(self, event: Any, speed: float) -> bool:
        def change() -> bool:
            self._set_max_speed(speed)
            return True

        return apply_change(event.client, change) is not None

    def _set_max_speed(self, speed: float) -> None:
        present = self._of_type("velocity")
        if speed <= 0.0:
            for spec in present:
                self._session.remove_limit(spec.name)
            return
        velocities = dict.fromkeys(self._joints, speed)
        if present:
            self._session.patch_limit(present[0].name, {"velocities": velocities})
        else:
            self._session.add_limit({"type": "velocity", "params": {"velocities": velocities}})

    # ------------------------------------------------------------ following
    def refresh(self, binding: dict[str, list[str]] | None = None) -> None:
        """Follow the session's limits (added, removed, toggled elsewhere), and say which
        of them hold joints at a bound after the latest step (``binding``)."""
        text = "; ".join(
            f"`{name}` holds {', '.join(joints)}" for name, joints in (binding or {}).items()
        )
        text = f"⚠ **At a limit:** {text}" if text else ""
        if self.binding.content != text:
            self.binding.content = text
        specs = self._session.limits()
        structure = tuple((spec.name or "", spec.type) for spec in specs)
        if structure != self._structure:
            self._structure = structure
            self._rebuild(specs)
        show = self._follower.show
        for spec in specs:
            if spec.name in self.enabled:
                show(self.enabled[spec.name], spec.enabled)
        show(self.joint_ranges, any(s.type == "configuration" and s.enabled for s in specs))
        speed = next(
            (
                max((_largest(v) for v in spec.params.velocities.values()), default=0.0)
                for spec in specs
                if isinstance(spec, VelocityLimitSpec) and spec.enabled
            ),
            0.0,
        )
        if not self._typed_speed.pending:
            show(self.max_speed, speed)
            self._typed_speed.show(speed)

    def _rebuild(self, specs: list[Any]) -> None:
        for row in self._rows:
            row.remove()
        self._rows = []
        self.enabled = {}
        gui = self._server.gui
        with self._list:
            if not specs:
                self._rows.append(gui.add_markdown("(no limits)"))
            for spec in specs:
                checkbox = gui.add_checkbox(
                    f"{spec.name} ({spec.type})", initial_value=spec.enabled
                )
                remove = gui.add_button(f"Remove {spec.name}", color="red")
                self._bind_row(spec.name, checkbox, remove)
                self.enabled[spec.name] = checkbox
                self._rows.extend((checkbox, remove))

    def _bind_row(self, name: str, checkbox: Any, remove: Any) -> None:
        session = self._session

        @checkbox.on_update
        def _(event: Any) -> None:
            if from_client(event):
                apply_change(
                    event.client, lambda: session.patch_limit(name, {"enabled": checkbox.value})
                )

        @remove.on_click
        def _(event: Any) -> None:
            apply_change(event.client, lambda: session.remove_limit(name))


def _largest(value: Any) -> float:
    """A speed limit as one number (ball joints may give three)."""
    return float(max(value)) if isinstance(value, (list, tuple)) else float(value)
