"""The compiled-model cache: shared while in use, kept a while after, then released."""

from __future__ import annotations

import gc
import threading
import weakref

import mujoco
from posekit.robots import RobotRegistry
from posekit.robots.model_cache import CacheLimits, ModelCache

XML = "<mujoco><worldbody><body><joint/><geom size='{}'/></body></worldbody></mujoco>"


class Compiler:
    """Counts compiles of tiny models (size tells them apart)."""

    def __init__(self) -> None:
        self.compiles = 0

    def __call__(self, size: float = 0.1) -> mujoco.MjModel:
        self.compiles += 1
        return mujoco.MjModel.from_xml_string(XML.format(size))


def test_a_model_in_use_is_shared_and_never_compiled_twice() -> None:
    cache, compile_ = ModelCache(CacheLimits(models=0, idle_s=0.0)), Compiler()
    held = cache.get("a", compile_)
    cache.expire()  # not recent any more (no room), but in use
    assert cache.get("a", compile_) is held
    assert compile_.compiles == 1


def test_concurrent_requests_compile_once() -> None:
    cache, compile_ = ModelCache(), Compiler()
    models: list[mujoco.MjModel] = []
    threads = [
        threading.Thread(target=lambda: models.append(cache.get("a", compile_))) for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert compile_.compiles == 1
    assert all(model is models[0] for model in models)


def test_unused_models_are_released_after_their_idle_time() -> None:
    now = [100.0]
    cache, compile_ = ModelCache(CacheLimits(idle_s=10.0), clock=lambda: now[0]), Compiler()
    dead = weakref.ref(cache.get("a", compile_))
    gc.collect()
    assert dead() is not None  # recent: kept although nobody holds it
    now[0] += 9.0
    cache.expire()
    assert cache.is_loaded("a")
    now[0] += 1.0
    cache.expire()
    gc.collect()
    assert dead() is None
    assert not cache.is_loaded("a")
    cache.get("a", compile_)
    assert compile_.compiles == 2


def test_recent_models_are_bounded_by_count_and_bytes() -> None:
    cache, compile_ = ModelCache(CacheLimits(models=2, megabytes=1e6)), Compiler()
    refs = [weakref.ref(cache.get(k, compile_)) for k in "abc"]
    gc.collect()
    assert [ref() is None for ref in refs] == [True, False, False]  # the oldest went
    newest = refs[2]()
    assert newest is not None
    one_model_mb = newest.nbuffer / 1e6
    small = ModelCache(CacheLimits(models=10, megabytes=1.5 * one_model_mb))
    refs = [weakref.ref(small.get(k, compile_)) for k in "abc"]
    gc.collect()
    assert [ref() is None for ref in refs] == [True, True, False]


def test_the_registry_releases_robots_no_session_uses() -> None:
    registry = RobotRegistry(menagerie=False, cache=CacheLimits(idle_s=0.0))
    arm = weakref.ref(registry.model("arm7"))
    registry.expire()
    gc.collect()
    assert arm() is None
    assert not registry.is_loaded("arm7")


def test_an_invalidated_key_is_compiled_again_and_its_old_model_stays_with_its_users() -> None:
    cache, compile_ = ModelCache(), Compiler()
    old = cache.get(("robot", "scene"), lambda: compile_(0.1))
    other = cache.get(("other", "scene"), lambda: compile_(0.2))
    assert cache.invalidate(lambda key: key[0] == "robot") == [("robot", "scene")]
    assert not cache.is_loaded(("robot", "scene")) and cache.is_loaded(("other", "scene"))
    new = cache.get(("robot", "scene"), lambda: compile_(0.3))
    assert new is not old and new.geom_size[0][0] == 0.3 and old.geom_size[0][0] == 0.1
    assert cache.get(("other", "scene"), compile_) is other
    assert compile_.compiles == 3


def test_a_compile_under_way_when_its_key_is_invalidated_is_not_kept() -> None:
    cache, compile_ = ModelCache(), Compiler()
    started, release = threading.Event(), threading.Event()

    def slow_compile() -> mujoco.MjModel:
        started.set()
        release.wait(5.0)
        return compile_(0.1)  # the files as they were when it started

    results: list[mujoco.MjModel] = []
    worker = threading.Thread(target=lambda: results.append(cache.get("a", slow_compile)))
    worker.start()
    started.wait(5.0)
    assert cache.invalidate(lambda key: key == "a") == ["a"]  # the files changed meanwhile
    release.set()
    worker.join(5.0)
    assert results[0].geom_size[0][0] == 0.1  # its caller still gets it
    assert not cache.is_loaded("a")  # but nobody else will
    assert cache.get("a", lambda: compile_(0.4)).geom_size[0][0] == 0.4
