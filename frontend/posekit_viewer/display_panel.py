"""The "Display" panel: show or hide collision geoms, body frames and the CoM marker.

The scene is shared, so these switches act for everyone watching the session.
"""

from __future__ import annotations

from typing import Any

import viser

from posekit_viewer.scene_renderer import SceneRenderer


class DisplayPanel:
    """Switches for the renderer's optional layers."""

    def __init__(self, server: viser.ViserServer, renderer: SceneRenderer) -> None:
        gui = server.gui
        with gui.add_folder("Display", expand_by_default=False):
            self.collision = gui.add_checkbox("Collision geoms", initial_value=False)
            self.frames = gui.add_checkbox("Body frames", initial_value=False)
            self.com = gui.add_checkbox("Center of mass", initial_value=False)

        @self.collision.on_update
        def _(_: Any) -> None:
            renderer.set_collision_visible(self.collision.value)

        @self.frames.on_update
        def _(_: Any) -> None:
            renderer.set_frames_visible(self.frames.value)

        @self.com.on_update
        def _(_: Any) -> None:
            renderer.set_com_visible(self.com.value)
