"""The "Session" panel: viewers, link, status and solve time, keyframe reset, save/load spec."""

from __future__ import annotations

import json
from typing import Any

import mujoco
import viser
from posekit.sessions.session import Session
from posekit.sessions.session_spec import SessionSpec

from posekit_viewer.panel_support import apply_change, object_names

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

    def __init__(self, server: viser.ViserServer, session: Session, link: str) -> None:
        self._session = session
        model = session.model
        gui = server.gui
        with gui.add_folder("Session"):
            self.viewers = gui.add_markdown("**Viewers:** 0")
            self.status = gui.add_markdown("**Status:** starting")
            self.solve_time = gui.add_markdown("**Solve time:** –")
            self.share = gui.add_text("Link", initial_value=link)
            self.copy_link = gui.add_html(COPY_LINK_HTML)
            keyframes = object_names(model, mujoco.mjtObj.mjOBJ_KEY, model.nkey)
            self.keyframe = gui.add_dropdown("Keyframe", keyframes or ("(none)",))
            self.reset = gui.add_button("Reset to keyframe", disabled=not keyframes)
            self.save = gui.add_button("Save spec")
            self.load = gui.add_upload_button("Load spec", mime_type="application/json")
        self._bind()

    def _bind(self) -> None:
        session = self._session

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
        """Show the viewer count, the solver status and the last solve time."""
        state = self._session.state
        self.viewers.content = f"**Viewers:** {viewers}"
        line = f"**Status:** {state.status} · step {state.seq}"
        if state.error:
            line += f"\n\n⚠ {state.error}"
        self.status.content = line
        self.solve_time.content = f"**Solve time:** {state.solve_us:.0f} µs"
