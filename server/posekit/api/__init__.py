"""The REST + websocket API of posekit's sessions (installed by :func:`posekit.app.create_app`)."""

from posekit.api.app import install_api

__all__ = ["install_api"]
