"""The "Joints" panel: one slider per hinge or slide joint, for posing the robot by hand.

A slider sets the whole configuration through :meth:`Session.set_q` (as ``PUT /q``
does); pause the solver to keep a hand-made pose, since running tasks pull the robot
back. The sliders follow the session's configuration otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import viser
from posekit.sessions.live.session import Session

from posekit_viewer.panel_support import Follower, apply_change, from_client, scalar_joints

UNLIMITED_RANGE = (-np.pi, np.pi)  # slider range of a joint without limits
SLIDER_STEP = 1e-3  # [rad] or [m]; smaller moves of q are not sent to the sliders


class JointPanel:
    """Joint sliders, by joint name."""

    def __init__(self, server: viser.ViserServer, session: Session) -> None:
        self._session = session
        model = session.model
        q = session.q
        self.sliders: dict[str, tuple[int, Any]] = {}
        self._follower = Follower()
        with server.gui.add_folder("Joints", expand_by_default=False):
            for j in scalar_joints(model):
                name = model.joint(j).name or f"joint {j}"
                low, high = model.jnt_range[j] if model.jnt_limited[j] else UNLIMITED_RANGE
                address = int(model.jnt_qposadr[j])
                slider = server.gui.add_slider(
                    name, min=float(low), max=float(high), step=SLIDER_STEP,
                    initial_value=float(np.clip(q[address], low, high)),
                )  # fmt: skip
                self._bind(address, slider)
                self.sliders[name] = (address, slider)

    def _bind(self, address: int, slider: Any) -> None:
        @slider.on_update
        def _(event: Any) -> None:
            if not from_client(event):
                return
            q = self._session.q
            q[address] = slider.value
            apply_change(event.client, lambda: self._session.set_q(q))

    def refresh(self, q: list[float]) -> None:
        """Show configuration ``q`` on the sliders (moves under half a step are skipped)."""
        show = self._follower.show
        for address, slider in self.sliders.values():
            value = min(max(float(q[address]), slider.min), slider.max)
            if abs(float(slider.value) - value) > 0.5 * SLIDER_STEP:
                show(slider, value)
