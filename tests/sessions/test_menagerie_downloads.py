"""Menagerie downloads can be turned off: a robot that is neither under ``MENAGERIE_ROOT``
nor in the download cache is then unavailable at once."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import mujoco_menagerie as mm
import pytest
from posekit.app import manager_from
from posekit.robots import RobotRegistry, RobotUnavailable
from posekit.settings import Settings
from support.models import needs_menagerie
from support.servers import LiveServer

ROBOT = "universal_robots_ur5e"


@pytest.fixture
def empty_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No Menagerie checkout, and an empty download cache."""
    monkeypatch.delenv("MENAGERIE_ROOT", raising=False)
    monkeypatch.setenv("MENAGERIE_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_with_downloads_off_an_uncached_robot_is_unavailable_at_once(empty_cache: Path) -> None:
    registry = RobotRegistry(download=False)
    started = time.monotonic()
    with pytest.raises(RobotUnavailable, match="downloads are off") as error:
        registry.model(ROBOT)
    assert time.monotonic() - started < 5.0  # no download, no retry
    assert ROBOT in str(error.value) and "POSEKIT_MENAGERIE_DOWNLOAD" in str(error.value)
    assert list(empty_cache.iterdir()) == []  # nothing was staged or locked
    assert registry.names()[:2] == ["arm7", "humanoid"] and ROBOT in registry.names()


def test_with_downloads_on_the_registry_fetches_into_the_cache(empty_cache: Path) -> None:
    # The tests' MENAGERIE_BASE_URL names a file that does not exist (support.models):
    # the attempt fails at once, and shows that the download was tried in the cache.
    assert os.environ["MENAGERIE_BASE_URL"].startswith("file:///nonexistent/")
    with pytest.raises(RobotUnavailable, match="could not be fetched from MuJoCo Menagerie"):
        RobotRegistry(download=True).model(ROBOT)
    assert (empty_cache / "locks").is_dir()


@needs_menagerie
def test_with_downloads_off_a_robot_already_in_the_cache_loads(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    checkout = Path(os.environ["MENAGERIE_ROOT"]) / ROBOT
    monkeypatch.delenv("MENAGERIE_ROOT")
    monkeypatch.setenv("MENAGERIE_CACHE_DIR", str(tmp_path))
    robot = mm.get(ROBOT)
    cache = mm.Cache()
    published = cache.model_path(robot)
    shutil.copytree(checkout, published)
    (published / ".complete").write_text("{}")  # what the package writes once published
    assert cache.is_cached(robot)
    model = RobotRegistry(download=False).model(ROBOT)
    assert model.nq == 6


def test_a_robot_missing_from_the_checkout_is_unavailable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MENAGERIE_ROOT", str(tmp_path))
    with pytest.raises(RobotUnavailable, match="not found under MENAGERIE_ROOT"):
        RobotRegistry(download=True).model(ROBOT)


def test_the_setting_reaches_the_servers_registry() -> None:
    assert Settings.from_env({}).menagerie_download is True  # users get downloads
    settings = Settings.from_env({"POSEKIT_MENAGERIE_DOWNLOAD": "false"})
    assert manager_from(settings).registry.download is False


def test_the_tests_servers_never_download(full_app: LiveServer) -> None:
    registry = full_app.manager.registry
    assert registry.download is False
