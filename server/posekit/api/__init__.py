"""The web API: FastAPI app factory, REST routes, websocket stream, error mapping."""

from posekit.api.app import create_app

__all__ = ["create_app"]
