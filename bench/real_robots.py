"""Every URDF of ``example-robot-data`` brought as a user brings it, and how it fares.

Each description folder is zipped alone (its URDF, meshes and textures, the package's
other URDFs left out) and uploaded to an in-process app; then a session is created on
it with the default preset, its first frame task's target is raised 3 cm, and after
3 s the table row is printed: the category the server gave it, the preset's frames,
the dragged task's error norm ‖e‖ (position and orientation together, unweighted) and
the session's status. Run: ``python bench/real_robots.py [filter …]`` (needs the dev
extra, which installs ``example-robot-data``).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from posekit.app import create_app
from posekit.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.robot_files import zipped_description

SHARE = Path(sys.prefix).glob("lib/python*/site-packages/cmeel.prefix/share/example-robot-data")
DRAG_M = 0.03
SETTLE_S = 3.0


def row(client: TestClient, urdf: Path, index: int) -> str:
    label = f"`{urdf.parent.parent.name}/{urdf.name}`"
    files = {"file": (f"{urdf.parent.parent.name}.zip", zipped_description(urdf))}
    uploaded = client.post("/api/robots", files=files, data={"name": f"robot_{index}"})
    if uploaded.status_code != 201:
        return f"| {label} | – | refused ({uploaded.status_code}): {uploaded.json()['detail'][:80]}… | – | – |"
    robot = uploaded.json()["name"]
    category = client.get(f"/api/robots/{robot}").json()["category"]
    session = client.post("/api/sessions", json={"robot": robot}).json()["id"]
    tasks: list[dict[str, Any]] = client.get(f"/api/sessions/{session}/tasks").json()
    frames = [t for t in tasks if t["type"] == "frame"]
    result, status = "no frame task", "–"
    if frames:
        position = list(frames[0]["target"]["position"])
        position[2] += DRAG_M
        url = f"/api/sessions/{session}/tasks/{frames[0]['name']}"
        client.patch(url, json={"target": {"position": position}})
        time.sleep(SETTLE_S)
        state = client.get(f"/api/sessions/{session}/state").json()
        error = state["errors"][frames[0]["name"]]
        result, status = f"{error:.4f}", state["status"]
    client.delete(f"/api/sessions/{session}")
    client.delete(f"/api/robots/{robot}")
    names = ", ".join(t["name"] for t in frames) or "–"
    return f"| {label} | {category} | {names} | {result} | {status} |"


def main() -> None:
    robots = next((path / "robots" for path in SHARE), None)
    if robots is None:
        sys.exit("example-robot-data is not installed (pip install example-robot-data)")
    wanted = sys.argv[1:]
    urdfs = [
        u
        for u in sorted(robots.glob("*/*/*.urdf"))
        if not wanted or any(w in str(u) for w in wanted)
    ]
    with tempfile.TemporaryDirectory() as data:
        settings = Settings(data_dir=data, max_uploaded_robots=len(urdfs) + 1)
        with TestClient(create_app(settings), base_url="http://127.0.0.1") as client:
            print("| URDF | category | preset frames | ‖e‖ 3 s after a 3 cm drag | status |")
            print("|---|---|---|---|---|")
            for index, urdf in enumerate(urdfs):
                print(row(client, urdf, index), flush=True)


if __name__ == "__main__":
    main()
