"""Fixtures shared by every test directory (helpers live in ``support``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.browser import require_browser
from support.clean_env import build_dist, clean_venv
from support.models import require_menagerie
from support.postgres import fresh_schema, require_postgres
from support.servers import LiveServer

SLOW = ("e2e", "cluster", "ops", "examples")  # test folders whose tests start servers or browsers


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark tests by what they need: ``browser`` (a Chromium), ``cluster`` (nginx and
    PostgreSQL), ``slow`` (servers of their own): ``pytest -m "not slow"`` and the like."""
    for item in items:
        folder = item.path.parent.name
        if folder in SLOW:
            item.add_marker(pytest.mark.slow)
        if folder == "cluster":
            item.add_marker(pytest.mark.cluster)
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile the IK kernels before any test starts a server.

    On a fresh checkout that takes half a minute of CPU (Numba, cached afterwards); a
    server's first session would otherwise wait for it past the tests' deadlines.
    """
    from posekit.warmup import compile_kernels

    compile_kernels(steps=1)


@pytest.fixture
def _menagerie() -> None:
    require_menagerie()


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A ``postgresql://`` URL with a schema of its own (``options=-csearch_path=…``),
    created for the test and dropped after it; skips (fails under ``CI``) without a
    PostgreSQL server (:mod:`support.postgres`)."""
    with fresh_schema(require_postgres()) as url:
        yield url


@pytest.fixture(scope="module")
def full_app() -> Iterator[LiveServer]:
    """The whole app (API + viewer) built from the environment, on a free port."""
    server = LiveServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """A headless Chromium of the machine through Playwright (skips or fails as
    require_browser)."""
    executable = require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield instance
        instance.close()


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel and the sdist ``python -m build`` makes of the checkout."""
    return build_dist(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="session")
def engine_env(tmp_path_factory: pytest.TempPathFactory, dist: Path) -> Path:
    """The ``bin`` of a new virtualenv with only the wheel installed (the engine)."""
    return clean_venv(tmp_path_factory.mktemp("engine-venv"), next(dist.glob("*.whl")))
