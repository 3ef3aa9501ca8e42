"""The robot registry and the default presets."""

from __future__ import annotations

import pytest
from posekit.robots import RobotNotFound, RobotRegistry, default_preset, end_effectors
from support.models import menagerie_model


def test_listing_does_no_io(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("MENAGERIE_ROOT", str(tmp_path / "missing"))
    registry = RobotRegistry()
    names = registry.names()
    assert names[:2] == ["arm7", "humanoid"] and len(names) > 50
    assert not registry.is_loaded("unitree_g1")
    assert registry.get("aloha").source == "menagerie"


def test_unknown_names_suggest_close_ones() -> None:
    registry = RobotRegistry()
    with pytest.raises(RobotNotFound, match="did you mean 'aloha'"):
        registry.get("alohaa")
    with pytest.raises(RobotNotFound, match="entry point"):
        registry.resolve_entry("arm7", "scene")


def test_models_are_cached_and_shared() -> None:
    registry = RobotRegistry(menagerie=False)
    assert registry.model("arm7") is registry.model("arm7", "arm7")


@pytest.mark.parametrize(
    ("robot", "expected"),
    [
        ("universal_robots_ur5e", [("attachment_site", "site")]),
        ("franka_emika_panda", [("attachment_site", "site")]),
        ("stanford_tidybot", [("pinch_site", "site")]),
        ("aloha", [("left/gripper", "site"), ("right/gripper", "site")]),
        (
            "unitree_g1",
            [
                ("left_foot", "site"),
                ("right_foot", "site"),
                ("left_palm", "site"),
                ("right_palm", "site"),
            ],
        ),
        (
            "unitree_h1",
            [
                ("left_foot", "site"),
                ("right_foot", "site"),
                ("left_wrist", "site"),
                ("right_wrist", "site"),
            ],
        ),
        ("shadow_hand", [(f"lh_{f}distal", "body") for f in ("ff", "mf", "rf", "lf", "th")]),
    ],
)
def test_menagerie_end_effectors(robot: str, expected: list[tuple[str, str]]) -> None:
    assert end_effectors(menagerie_model(robot)) == expected


def test_builtin_presets() -> None:
    registry = RobotRegistry(menagerie=False)
    arm = default_preset(registry.model("arm7"))
    assert [(t["name"], t["type"]) for t in arm] == [("ee", "frame"), ("posture", "posture")]
    humanoid = {t["name"]: t for t in default_preset(registry.model("humanoid"))}
    assert humanoid["com"]["type"] == "com"
    assert humanoid["left_foot"]["params"]["position_cost"] == 10.0
    assert humanoid["left_hand"]["params"]["position_cost"] == 1.0
