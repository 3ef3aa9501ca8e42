"""Fixtures of the viewer tests: a started manager and the viewer of an arm session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from posekit.sessions import SessionManager
from posekit_viewer.session_viewer import SessionViewer


@pytest.fixture
def manager() -> Iterator[SessionManager]:
    """A started session manager (solve loop running), shut down after the test."""
    sessions = SessionManager()
    sessions.start()
    yield sessions
    sessions.shutdown()


@pytest.fixture
def viewer(manager: SessionManager) -> Iterator[SessionViewer]:
    """The viewer of a session on the built-in arm with its preset tasks (ee, posture)."""
    session = manager.create({"robot": "arm7"})
    live = SessionViewer(session, "http://test/viewer/x")
    yield live
    live.stop()
