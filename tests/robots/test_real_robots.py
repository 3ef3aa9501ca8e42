"""Real ROS description packages, as published on PyPI (``example-robot-data``), brought
as a user brings them: the description folder zipped and uploaded. Every URDF loads
(or is refused saying which file of another package it needs), gets a sensible
category and preset, follows a first drag from its home and exports."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from posekit.app import create_app
from posekit.settings import Settings
from support.robot_files import zipped_description
from support.waiting import wait_for

SHARE = Path(sys.prefix).glob("lib/python*/site-packages/cmeel.prefix/share/example-robot-data")
ROBOTS = next((path / "robots" for path in SHARE), None)
URDFS = sorted(ROBOTS.glob("*/*/*.urdf")) if ROBOTS else []
if not URDFS:
    pytest.skip(
        "example-robot-data is not installed (make test installs it)", allow_module_level=True
    )

# URDFs whose meshes live in another description package: refused, naming the file.
NEEDS_ANOTHER_PACKAGE = {"anymal-kinova.urdf": "kinova_description", "b1-z1.urdf": "z1_description"}
CATEGORIES = {
    "a1.urdf": "quadruped",
    "go2.urdf": "quadruped",
    "solo12.urdf": "quadruped",
    "anymal.urdf": "quadruped",
    "g1_29dof_with_hand_rev_1_0.urdf": "humanoid",
    "talos_reduced.urdf": "humanoid",
    "icub.urdf": "humanoid",
    "panda.urdf": "arm",
    "kinova.urdf": "arm",
    "z1.urdf": "arm",
    "ur5_robot.urdf": "arm",
    "allegro_right_hand.urdf": "end_effector",
    "baxter.urdf": "dual_arm",
}
# One frame task per hand or tool: never two on one flange nor one a finger.
PRESETS = {
    "ur5_robot.urdf": ["ee_link"],
    "g1_29dof_with_hand_rev_1_0.urdf": ["left_hand_palm_link", "right_hand_palm_link"],
    "talos_reduced.urdf": ["gripper_left_base_link", "gripper_right_base_link"],
    "icub.urdf": ["l_foot_dh_frame", "r_foot_dh_frame", "l_gripper", "r_gripper"],
    "a1.urdf": ["FR_foot", "FL_foot", "RR_foot", "RL_foot"],
}
# Robots whose home is singular when every joint is at 0: a first drag must be followed.
DRAGGED = ["panda.urdf", "ur5_robot.urdf", "kinova.urdf", "z1.urdf", "xarm7.urdf", "so101.urdf"]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("real-robots")
    settings = Settings(data_dir=str(folder), max_uploaded_robots=200, menagerie_download=False)
    with TestClient(create_app(settings), base_url="http://127.0.0.1") as test_client:
        yield test_client


def upload(client: TestClient, urdf: Path) -> Any:
    name = f"{urdf.parent.parent.name}_{urdf.stem}".replace("-", "_").replace(".", "_")[:60]
    files = {"file": (f"{urdf.parent.parent.name}.zip", zipped_description(urdf))}
    return client.post("/api/robots", files=files, data={"name": name})


NAMED = {*NEEDS_ANOTHER_PACKAGE, *CATEGORIES, *PRESETS}
# One URDF a package (its first), and every one named above.
CHOSEN = [
    urdf
    for index, urdf in enumerate(URDFS)
    if urdf.name in NAMED or index == 0 or URDFS[index - 1].parent.parent != urdf.parent.parent
]


@pytest.mark.parametrize("urdf", CHOSEN, ids=lambda path: f"{path.parent.parent.name}/{path.name}")
def test_every_description_loads_with_a_sensible_category_and_preset(
    client: TestClient, urdf: Path
) -> None:
    response = upload(client, urdf)
    if urdf.name in NEEDS_ANOTHER_PACKAGE:
        assert response.status_code == 422
        detail = response.json()["detail"]
        assert NEEDS_ANOTHER_PACKAGE[urdf.name] in detail and "package://" in detail
        return
    assert response.status_code == 201, response.text
    robot = response.json()["name"]
    created = client.post("/api/sessions", json={"robot": robot})
    assert created.status_code == 201, created.text
    session = created.json()["id"]
    try:
        if urdf.name in CATEGORIES:
            assert client.get(f"/api/robots/{robot}").json()["category"] == CATEGORIES[urdf.name]
        frames = [t["name"] for t in client.get(f"/api/sessions/{session}/tasks").json()]
        if urdf.name in PRESETS:
            assert [name for name in frames if name not in ("com", "posture")] == PRESETS[urdf.name]
        assert client.get(f"/api/sessions/{session}/export.py").status_code == 200
    finally:
        client.delete(f"/api/sessions/{session}")
        assert client.delete(f"/api/robots/{robot}").status_code == 204


def drag_until_parked(client: TestClient, name: str, up: float) -> tuple[dict[str, Any], str]:
    """Upload the URDF ``name``, raise its first preset frame's target by ``up`` [m] and
    wait for the session to park; its state then, and the task's name."""
    urdf = next(path for path in URDFS if path.name == name)
    robot = upload(client, urdf).json()["name"]
    session = client.post("/api/sessions", json={"robot": robot}).json()["id"]
    try:
        tasks = client.get(f"/api/sessions/{session}/tasks").json()
        task = next(t for t in tasks if t["type"] == "frame")
        position = list(task["target"]["position"])
        position[2] += up
        url = f"/api/sessions/{session}/tasks/{task['name']}"
        assert client.patch(url, json={"target": {"position": position}}).status_code == 200

        def parked() -> dict[str, Any] | None:
            state = client.get(f"/api/sessions/{session}/state").json()
            return state if state["status"] == "converged" and state["revision"] > 0 else None

        state = wait_for(parked, timeout=60, what=f"{name} parks after the drag")
        time.sleep(0.5)
        later = client.get(f"/api/sessions/{session}/state").json()
        assert later["seq"] == state["seq"]  # at rest: no step since it parked
        return state, task["name"]
    finally:
        client.delete(f"/api/sessions/{session}")
        assert client.delete(f"/api/robots/{robot}").status_code == 204


@pytest.mark.parametrize("name", DRAGGED)
def test_a_first_drag_from_home_is_followed_and_settles(client: TestClient, name: str) -> None:
    state, task = drag_until_parked(client, name, 0.03)
    assert state["errors"][task] < 1e-3, state["errors"]


def test_an_unreachable_target_leaves_the_robot_at_rest(client: TestClient) -> None:
    """A Panda's target 0.8 m above its reach: the session parks and stays at rest (from
    the zero home it used to swing by 2 rad for minutes)."""
    state, task = drag_until_parked(client, "panda.urdf", 0.8)
    assert state["errors"][task] > 0.1  # short of it, and says so
