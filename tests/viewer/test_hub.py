"""The viewer hub: one viewer per session, stopped when its session closes."""

from __future__ import annotations

from posekit.sessions import SessionManager
from posekit_viewer.hub import ViewerHub


def test_a_deleted_or_unloaded_session_stops_its_viewer() -> None:
    with SessionManager(idle_unload_s=60.0) as manager:
        hub = ViewerHub(manager)
        manager.on_session_closed(hub.forget)
        deleted = manager.create({"robot": "arm7"})
        idle = manager.create({"robot": "arm7"})
        first = hub.viewer(deleted.id, "http://x/viewer/a")
        second = hub.viewer(idle.id, "http://x/viewer/b")
        try:
            assert hub.viewer(deleted.id, "http://x/viewer/a") is first  # one per session
            manager.delete(deleted.id)
            assert first.stopped and hub.get(deleted.id) is None

            idle.last_used -= 120.0
            assert manager.unload_idle() == [idle.id]
            assert second.stopped and hub.get(idle.id) is None
            revived = hub.viewer(idle.id, "http://x/viewer/b")  # the link revives it
            assert revived is not second and revived.session.id == idle.id
            assert not revived.session.closed
        finally:
            hub.stop_all()
