"""The "Display" panel: show or hide collision geoms, body frames, the CoM marker and the
scene's mocap bodies (drawn muted; they are not the session's targets).

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
            self.mocap = gui.add_checkbox(
                "Scene mocap bodies", initial_value=True,
                hint="The scene's static mocap markers, drawn grey; drag the gizmos instead.",
            )  # fmt: skip

        @self.collision.on_update
        def _(_: Any) -> None:
            renderer.set_collision_visible(self.collision.value)

        @self.frames.on_update
        def _(_: Any) -> None:
            renderer.set_frames_visible(self.frames.value)

        @self.com.on_update
        def _(_: Any) -> None:
            renderer.set_com_visible(self.com.value)

        @self.mocap.on_update
        def _(_: Any) -> None:
            renderer.set_mocap_visible(self.mocap.value)
