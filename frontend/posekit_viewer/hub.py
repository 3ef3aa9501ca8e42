"""All sessions' viewers: started on a session's first viewer, stopped with the session."""

from __future__ import annotations

import threading

from posekit.sessions.manager import SessionManager

from posekit_viewer.session_viewer import SessionViewer


class ViewerHub:
    """Maps session ids to their :class:`SessionViewer`."""

    def __init__(self, manager: SessionManager) -> None:
        self._manager = manager
        self._viewers: dict[str, SessionViewer] = {}
        self._lock = threading.Lock()

    def viewer(self, session_id: str, link: str) -> SessionViewer:
        """The session's viewer, started if needed (raises if the session is unknown)."""
        session = self._manager.get(session_id)
        with self._lock:
            self._prune()
            viewer = self._viewers.get(session_id)
            if viewer is None or viewer.session is not session:
                if viewer is not None:
                    viewer.stop()
                viewer = SessionViewer(session, link, takes=self._manager.takes)
                self._viewers[session_id] = viewer
            return viewer

    def get(self, session_id: str) -> SessionViewer | None:
        """The session's viewer if one is running."""
        with self._lock:
            self._prune()
            return self._viewers.get(session_id)

    def _prune(self) -> None:
        for session_id, viewer in list(self._viewers.items()):
            if viewer.session.closed:
                viewer.stop()
                del self._viewers[session_id]

    def forget(self, session_id: str) -> None:
        """Stop the viewer of a session that was deleted or unloaded (no-op otherwise)."""
        with self._lock:
            viewer = self._viewers.get(session_id)
            if viewer is None or not viewer.session.closed:
                return
            del self._viewers[session_id]
        viewer.stop()

    def stop_all(self) -> None:
        """Stop every viewer (app shutdown)."""
        with self._lock:
            for viewer in self._viewers.values():
                viewer.stop()
            self._viewers.clear()
