"""``/api/robots``: built-in and Menagerie robots, their descriptions and presets."""

from __future__ import annotations

import httpx
import pytest
from support.models import needs_menagerie


def test_listing_has_builtins_first_then_menagerie(client: httpx.Client) -> None:
    robots = client.get("/api/robots").json()
    names = [r["name"] for r in robots]
    assert names[:2] == ["arm7", "humanoid"]
    assert {r["source"] for r in robots[:2]} == {"builtin"}
    assert "universal_robots_ur5e" in names and "unitree_g1" in names and "aloha" in names
    ur5e = next(r for r in robots if r["name"] == "universal_robots_ur5e")
    assert ur5e["source"] == "menagerie" and ur5e["category"] == "arm"
    assert ur5e["default_entry"] in ur5e["entries"]


def test_listing_filters(client: httpx.Client) -> None:
    builtin = client.get("/api/robots", params={"source": "builtin"}).json()
    assert [r["name"] for r in builtin] == ["arm7", "humanoid"]
    arms = client.get("/api/robots", params={"category": "arm"}).json()
    assert "arm7" in [r["name"] for r in arms] and "humanoid" not in [r["name"] for r in arms]
    assert client.get("/api/robots", params={"source": "elsewhere"}).status_code == 422


def test_builtin_arm_description(client: httpx.Client) -> None:
    arm = client.get("/api/robots/arm7").json()
    assert (arm["nq"], arm["nv"], arm["floating_base"]) == (7, 7, False)
    assert [j["name"] for j in arm["joints"]] == [f"joint{i}" for i in range(1, 8)]
    assert arm["joints"][3]["range"] == pytest.approx([-3.07, -0.07])
    assert {"ee", "wrist_cam"} <= set(arm["frames"]["site"])
    assert "hand" in arm["frames"]["body"] and "floor" in arm["frames"]["geom"]
    assert arm["keyframes"] == ["home"] and arm["default_keyframe"] == "home"
    assert [t["name"] for t in arm["preset"]] == ["ee", "posture"]


def test_builtin_humanoid_preset_holds_the_feet(client: httpx.Client) -> None:
    humanoid = client.get("/api/robots/humanoid").json()
    assert humanoid["floating_base"] is True
    assert humanoid["joints"][0] == {
        "name": "root",
        "type": "free",
        "limited": False,
        "range": None,
        "qpos_adr": 0,
        "dof_adr": 0,
        "nq": 7,
        "nv": 6,
    }
    preset = {t["name"]: t for t in humanoid["preset"]}
    assert set(preset) == {"left_hand", "right_hand", "left_foot", "right_foot", "com", "posture"}
    assert (
        preset["left_foot"]["params"]["position_cost"]
        > preset["left_hand"]["params"]["position_cost"]
    )


@needs_menagerie
def test_menagerie_descriptions(client: httpx.Client) -> None:
    ur5e = client.get("/api/robots/universal_robots_ur5e").json()
    assert "attachment_site" in ur5e["frames"]["site"] and "home" in ur5e["keyframes"]
    assert [t["params"].get("frame") for t in ur5e["preset"]] == ["attachment_site", None]
    g1 = client.get("/api/robots/unitree_g1").json()
    assert g1["floating_base"] and "com" in [t["name"] for t in g1["preset"]]
    aloha = client.get("/api/robots/aloha").json()
    assert [e["name"] for e in aloha["equalities"]] == ["#0", "#1"]
    assert {e["type"] for e in aloha["equalities"]} == {"joint"}
    assert {t["params"].get("frame") for t in aloha["preset"]} == {
        "left/gripper",
        "right/gripper",
        None,
    }
    entry = client.get("/api/robots/universal_robots_ur5e", params={"entry": "ur5e"}).json()
    assert entry["entry"] == "ur5e"


def test_unknown_robot_and_entry_are_404(client: httpx.Client) -> None:
    response = client.get("/api/robots/ur5")
    assert response.status_code == 404
    assert "'ur5'" in response.json()["detail"]
    response = client.get("/api/robots/arm7", params={"entry": "scene"})
    assert response.status_code == 404
    assert "'arm7'" in response.json()["detail"] and "scene" in response.json()["detail"]


@needs_menagerie
def test_a_robot_missing_from_the_checkout_is_503_not_500(client: httpx.Client) -> None:
    response = client.get("/api/robots/agility_cassie")
    assert response.status_code == 503
    assert "agility_cassie" in response.json()["detail"]
    response = client.post("/api/sessions", json={"robot": "agility_cassie"})
    assert response.status_code == 503
