"""A live server of robots from files: a robot folder (an MJCF arm with an OBJ mesh, a
URDF package with a ``package://`` STL), a data directory for uploads with small caps,
and one registry."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import httpx
from posekit.robots import RobotRegistry
from posekit.sessions import SessionManager
from posekit.settings import Settings

from support.robot_files import write_mjcf_arm, write_urdf_package
from support.servers import LiveServer
from support.waiting import wait_for

UPLOAD_CAPS = {
    "POSEKIT_MAX_UPLOADED_ROBOTS": "3",
    "POSEKIT_UPLOAD_MAX_BYTES": str(1 << 20),
    "POSEKIT_UPLOAD_MAX_FILE_BYTES": str(1 << 20),
    "POSEKIT_UPLOAD_MAX_TOTAL_BYTES": str(2 << 20),
    "POSEKIT_UPLOAD_MAX_FILES": "100",
    "POSEKIT_ROBOT_MAX_BODIES": "40",
}


@dataclass
class OwnServer:
    live: LiveServer
    client: httpx.Client
    robots: Path  # the robot folder it serves
    data: Path  # its data directory


def start_own_server(folder: Path) -> OwnServer:
    """Write the robot folder under ``folder`` and serve it."""
    robots, data = folder / "robots", folder / "data"
    robots.mkdir()
    write_mjcf_arm(robots)
    write_urdf_package(robots)
    registry = RobotRegistry(menagerie=False)
    settings = Settings.from_env(
        {"POSEKIT_ROBOTS_DIR": str(robots), "POSEKIT_DATA_DIR": str(data), **UPLOAD_CAPS}
    )
    live = LiveServer(SessionManager(registry), settings).start()
    return OwnServer(live, httpx.Client(base_url=live.base_url, timeout=60.0), robots, data)


def stop_own_server(own: OwnServer) -> None:
    own.client.close()
    own.live.stop()


def settled(client: httpx.Client, session_id: str, revision: int = 0) -> dict:
    """The state once the session converged at ``revision`` or later."""
    return wait_for(
        lambda: (
            state
            if (state := client.get(f"/api/sessions/{session_id}/state").json())["converged"]
            and state["revision"] >= revision
            else None
        ),
        timeout=30,
        what="a converged state",
    )
