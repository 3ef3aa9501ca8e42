"""Driving a viser viewer without a browser: fake clients, widget events, gizmo drags,
and a log of the scene messages a viser server queues."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import viser
from viser import _messages
from viser._gui_handles import GuiEvent


@dataclass
class FakeClient:
    """The parts of a ``viser.ClientHandle`` that the panels use."""

    client_id: int = 101
    notifications: list[tuple[str, str]] = field(default_factory=list)
    downloads: list[tuple[str, bytes]] = field(default_factory=list)

    def add_notification(self, title: str, body: str, **_: Any) -> None:
        self.notifications.append((title, body))

    def send_file_download(self, filename: str, content: bytes, **_: Any) -> None:
        self.downloads.append((filename, content))


def browser_sets(widget: Any, value: Any, client: FakeClient) -> None:
    """A browser changed ``widget`` to ``value``: store it and run its callbacks."""
    impl = widget._impl
    impl.value = type(impl.value)(value)
    impl.update_timestamp = time.time()
    for callback in list(impl.update_cb):
        callback(GuiEvent(client=client, client_id=client.client_id, target=widget))  # type: ignore[arg-type]


def browser_clicks(button: Any, client: FakeClient) -> None:
    """A browser clicked ``button``."""
    for callback in list(button._impl.update_cb):
        callback(GuiEvent(client=client, client_id=client.client_id, target=button))  # type: ignore[arg-type]


def _on_viser_loop(server: viser.ViserServer, coroutine: Any) -> None:
    asyncio.run_coroutine_threadsafe(coroutine, server.get_event_loop()).result(timeout=10.0)


def drag_start(server: viser.ViserServer, name: str, client_id: int = 7) -> None:
    """A browser grabbed the gizmo ``name`` (its scene path)."""
    message = _messages.TransformControlsDragStartMessage(name=name)
    _on_viser_loop(server, server.scene._handle_transform_controls_drag_start(client_id, message))


def drag_to(
    server: viser.ViserServer,
    name: str,
    position: list[float],
    wxyz: list[float],
    client_id: int = 7,
) -> None:
    """A browser moved the gizmo ``name`` to a pose; returns once the viewer handled it."""
    message = _messages.TransformControlsUpdateMessage(
        name=name, wxyz=tuple(wxyz), position=tuple(position)
    )
    _on_viser_loop(server, server.scene._handle_transform_controls_updates(client_id, message))


def drag_end(server: viser.ViserServer, name: str, client_id: int = 7) -> None:
    """A browser released the gizmo ``name``."""
    message = _messages.TransformControlsDragEndMessage(name=name)
    _on_viser_loop(server, server.scene._handle_transform_controls_drag_end(client_id, message))


def settled(viewer: Any) -> bool:
    """The session is paused and the viewer has drawn its latest state."""
    session = viewer.session
    state = session.state
    return state.status == "paused" and viewer.drawn == (state.seq, session.revision)


def close(a: Any, b: Any, atol: float = 1e-9) -> bool:
    """Whether two vectors are equal within ``atol``."""
    return bool(np.allclose(np.asarray(a, float), np.asarray(b, float), atol=atol))


class MessageLog:
    """Records the scene messages a viser server queues for its browsers.

    Each entry is ``(message class name, node name, atomic depth)``; ``("FLUSH", None,
    0)`` marks the end of an outermost ``server.atomic()`` block, when browsers may
    apply what was queued.
    """

    def __init__(self, server: viser.ViserServer) -> None:
        self.entries: list[tuple[str, str | None, int]] = []
        buffer = server._websock_server.get_message_buffer()
        push, atomic_end = buffer.push, buffer.atomic_end

        def recording_push(message: Any) -> None:
            name = getattr(message, "name", None)
            self.entries.append((type(message).__name__, name, buffer.atomic_counter))
            push(message)

        def recording_atomic_end() -> None:
            atomic_end()
            if buffer.atomic_counter == 0:
                self.entries.append(("FLUSH", None, 0))

        buffer.push = recording_push  # type: ignore[method-assign]
        buffer.atomic_end = recording_atomic_end  # type: ignore[method-assign]

    def clear(self) -> None:
        self.entries.clear()

    def kinds(self) -> set[str]:
        """Class names of the recorded messages."""
        return {kind for kind, _, _ in self.entries if kind != "FLUSH"}

    def poses(self, prefix: str) -> list[int]:
        """Indices of the pose messages for nodes under ``prefix``."""
        return [
            index
            for index, (kind, name, _) in enumerate(self.entries)
            if kind in ("SetPositionMessage", "SetOrientationMessage")
            and (name or "").startswith(prefix)
        ]
