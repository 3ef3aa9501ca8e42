"""The "Session" panel: viewers, status and solve time, framing the robot, link, keyframe
reset, save/load spec, and the exports (a Python script, the pose as an MJCF keyframe).

The status says when a parked session settled short of its targets, with the task and
by how much, and a live reload of the robot's files what it did or why it failed
(:mod:`posekit_viewer.reload_notice`) (:mod:`posekit_viewer.target_shortfall`); the solve time is the median of
the recent steps and the last one (:mod:`posekit_viewer.solve_times`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import mujoco
import viser
from posekit.sessions.export.export_script import keyframe_line, python_script
from posekit.sessions.live.session import Session
from posekit.sessions.specs.session_spec import SessionSpec

from posekit_viewer.panel_support import apply_change, object_names
from posekit_viewer.reload_notice import reload_text
from posekit_viewer.solve_times import SolveTimes
from posekit_viewer.target_shortfall import TargetShortfall, describe

# The page's own address (what the browser actually reached, proxies included),
# without the query string so an access token is never copied along.
COPY_LINK_HTML = """<button type="button" class="posekit-copy-link"
 style="width:100%;padding:0.35em;border-radius:4px;border:1px solid #888;cursor:pointer"
 onclick="(function (button) {
   var link = location.origin + location.pathname;
   var done = function () { button.textContent = 'Link copied'; };
   var fallback = function () {
     var area = document.createElement('textarea');
     area.value = link; document.body.appendChild(area); area.select();
     document.execCommand('copy'); area.remove(); done();
   };
   if (navigator.clipboard && window.isSecureContext) {
     navigator.clipboard.writeText(link).then(done, fallback);
   } else { fallback(); }
 })(this)">Copy session link</button>"""


class SessionPanel:
    """Who is watching, how the solver is doing, and the session as a whole."""

    def __init__(
        self,
        server: viser.ViserServer,
        session: Session,
        link: str,
        on_frame: Callable[[Any], None],
    ) -> None:
        self._session = session
        self._on_frame = on_frame
        self.solve_times = SolveTimes()
        self._shortfall = TargetShortfall(session.model)
        model = session.model
        gui = server.gui
        with gui.add_folder("Session"):
            self.viewers = gui.add_markdown("**Viewers:** 0")
            self.status = gui.add_markdown("**Status:** starting")
            self.solve_time = gui.add_markdown("**Solve time:** –")
            self.robot_files = gui.add_markdown("")
            self.frame_robot = gui.add_button("Frame robot")
            self.share = gui.add_text("Link", initial_value=link)
            self.copy_link = gui.add_html(COPY_LINK_HTML)
            keyframes = object_names(model, mujoco.mjtObj.mjOBJ_KEY, model.nkey)
            self.keyframe = gui.add_dropdown("Keyframe", keyframes or ("(none)",))
            self.reset = gui.add_button("Reset to keyframe", disabled=not keyframes)
            self.save = gui.add_button("Save spec")
            self.load = gui.add_upload_button("Load spec", mime_type="application/json")
            self.export_python = gui.add_button("Export as Python")
            self.export_key = gui.add_button("Export pose as MJCF key")
        self._bind()

    def _bind(self) -> None:
        session = self._session

        @self.frame_robot.on_click
        def _(event: Any) -> None:
            self._on_frame(event.client)

        @self.export_python.on_click
        def _(event: Any) -> None:
            script = python_script(session.spec(), session.model, session.id)
            event.client.send_file_download(f"posekit_{session.id}.py", script.encode())

        @self.export_key.on_click
        def _(event: Any) -> None:
            line = keyframe_line(session.spec().q) + "\n"
            event.client.send_file_download(f"posekit_{session.id}_key.xml", line.encode())

        @self.reset.on_click
        def _(event: Any) -> None:
            apply_change(event.client, lambda: session.set_q(keyframe=self.keyframe.value))

        @self.save.on_click
        def _(event: Any) -> None:
            spec = session.spec().model_dump(mode="json")
            payload = json.dumps(spec, indent=2).encode()
            event.client.send_file_download(f"posekit-{session.id}.json", payload)

        @self.load.on_upload
        def _(event: Any) -> None:
            content = event.target.value.content  # this upload's file
            apply_change(event.client, lambda: self.load_spec(content))

    def load_spec(self, content: bytes) -> None:
        """Replace the session's q, tasks, limits and solver with an uploaded spec.

        The spec is validated completely (parsed, and every task and limit built on a
        scratch session) before anything changes.
        """
        spec = SessionSpec.model_validate_json(content)
        if spec.robot != self._session.robot:
            raise ValueError(
                f"the spec is for robot {spec.robot!r}, this session is on {self._session.robot!r}"
            )
        self._session.replace_spec(spec)

    def refresh(self, viewers: int) -> None:
        """Show the viewer count, the solver status and the solve times."""
        session = self._session
        state = session.state
        self.viewers.content = f"**Viewers:** {viewers}"
        line = f"**Status:** {state.status} · step {state.seq}"
        if state.status == "converged":
            short = self._shortfall.of(state, session.revision, session.tasks)
            if short:
                line = f"**Status:** settled short of its targets · step {state.seq}"
                line += "\n\n" + describe(short)
        if state.error:
            line += f"\n\n⚠ {state.error}"
        self.status.content = line
        self.solve_time.content = f"**Solve time:** {self.solve_times.text()}"
        self.robot_files.content = reload_text(session.last_reload)
