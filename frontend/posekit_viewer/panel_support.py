"""Helpers shared by the viewer's panels: applying a change, naming model objects.

Every panel changes the session through the same :class:`Session` methods as the REST
API. :func:`apply_change` runs such a change and turns a rejection into a notification
for the viewer who made it; the session is left as it was.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import mujoco
from posekit import PosekitError
from pydantic import ValidationError

logger = logging.getLogger(__name__)

Rejected = (PosekitError, ValidationError, ValueError, KeyError, LookupError)
HINGE_OR_SLIDE = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
EDIT_HOLD = 0.4  # [s] a widget a browser just changed is not overwritten for this long


def apply_change(client: Any, action: Callable[[], Any]) -> Any:
    """Run a session change; a rejection is shown to ``client`` and returns None."""
    try:
        return action()
    except Rejected as error:
        message = short_message(error) if isinstance(error, ValidationError) else str(error)
        logger.info("viewer change rejected: %s", message)
        if client is not None:
            client.add_notification("Rejected", message, color="red", auto_close_seconds=6.0)
        return None


def short_message(error: ValidationError) -> str:
    """The first problem of a validation error, as ``where: what``."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ()))
    message = str(first.get("msg", "invalid"))
    return f"{where}: {message}" if where else message


def object_names(model: mujoco.MjModel, obj: mujoco.mjtObj, count: int) -> list[str]:
    """Names of the model's objects of one kind (unnamed ones left out)."""
    names = [mujoco.mj_id2name(model, obj, i) for i in range(count)]
    return [name for name in names if name]


def scalar_joints(model: mujoco.MjModel) -> list[int]:
    """Ids of the hinge and slide joints (one scalar coordinate each)."""
    return [j for j in range(model.njnt) if int(model.jnt_type[j]) in HINGE_OR_SLIDE]


def from_client(event: Any) -> bool:
    """Whether a GUI event came from a browser (not from the server setting a value)."""
    return getattr(event, "client", None) is not None


class Follower:
    """Shows session values in widgets, except in widgets a browser is changing.

    A browser's change reaches the widget at once but the session only when the
    widget's callback has run (in viser's thread pool); overwriting the widget in
    between would undo the change. So a widget changed by a browser less than
    ``EDIT_HOLD`` seconds ago is left alone (a later refresh shows the session's
    value if the change was rejected). Values this follower wrote do not count.
    """

    def __init__(self, hold: float = EDIT_HOLD) -> None:
        self._hold = hold
        self._written: dict[int, float] = {}

    def editing(self, widget: Any) -> bool:
        """Whether a browser changed ``widget`` in the last ``hold`` seconds."""
        stamp = float(widget.update_timestamp)
        return stamp != self._written.get(id(widget)) and time.time() - stamp < self._hold

    def show(self, widget: Any, value: Any, tolerance: float = 1e-12) -> None:
        """Put ``value`` in ``widget`` if it differs and nobody is editing it."""
        current = widget.value
        if isinstance(value, float) and not isinstance(current, bool):
            if abs(float(current) - value) <= tolerance * max(1.0, abs(value)):
                return
        elif current == value:
            return
        if self.editing(widget):
            return
        widget.value = value
        if len(self._written) > 4096:  # widgets of rebuilt panels are gone
            self._written.clear()
        self._written[id(widget)] = float(widget.update_timestamp)
