"""posekit as users install it: a wheel and an sdist built from the checkout, the wheel
installed in a clean virtualenv. ``pip install posekit`` is the engine alone (no web
framework) and runs the README's engine snippet; the ``server`` extra adds ``posekit up``."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import time
import venv
import zipfile
from pathlib import Path

import httpx
import pytest
from support.ports import free_port
from support.readme import engine_snippet

REPO = Path(__file__).resolve().parents[2]
WEB_PACKAGES = {"fastapi", "starlette", "uvicorn", "pydantic", "viser", "psycopg", "trimesh"}


def _run(*command: str | Path, cwd: Path | None = None, timeout: float = 900) -> str:
    result = subprocess.run(
        [str(part) for part in command], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, f"{command}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel and the sdist ``python -m build`` makes of the checkout."""
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, "-m", "build", "--outdir", out, REPO)
    return out


@pytest.fixture(scope="module")
def clean_env(tmp_path_factory: pytest.TempPathFactory, dist: Path) -> Path:
    """A new virtualenv with the wheel installed, and nothing else asked for."""
    home = tmp_path_factory.mktemp("venv")
    venv.create(home, with_pip=True)
    python = home / "bin" / "python"
    _run(python, "-m", "pip", "install", "--quiet", next(dist.glob("*.whl")))
    return home


def _installed(home: Path) -> set[str]:
    listed = _run(home / "bin" / "python", "-m", "pip", "list", "--format=freeze")
    return {line.split("==")[0].lower() for line in listed.splitlines() if "==" in line}


def test_the_sdist_holds_what_the_wheel_is_built_from(dist: Path) -> None:
    wheel = zipfile.ZipFile(next(dist.glob("*.whl"))).namelist()
    sdist = tarfile.open(next(dist.glob("*.tar.gz"))).getnames()
    for shipped in ("posekit/models/arm7.xml", "posekit_viewer/static/index.html"):
        assert shipped in wheel
    for source in ("server/posekit/ik/solve.py", "models/arm7.xml", "README.md", "CHANGELOG.md"):
        assert any(name.endswith("/" + source) for name in sdist), source


def test_the_engine_installs_alone_and_runs_the_readme_snippet(
    clean_env: Path, tmp_path: Path
) -> None:
    assert not WEB_PACKAGES & _installed(clean_env)
    (tmp_path / "snippet.py").write_text(engine_snippet())
    printed = _run(clean_env / "bin" / "python", "snippet.py", cwd=tmp_path)
    assert float(printed.split()[-1]) < 1e-4


def test_posekit_up_without_the_server_extra_says_what_to_install(clean_env: Path) -> None:
    result = subprocess.run(
        [clean_env / "bin" / "posekit", "up", "--robot", "none"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "pip install 'posekit[server]'" in result.stderr


def test_the_server_extra_gives_posekit_up(clean_env: Path, dist: Path) -> None:
    wheel = next(dist.glob("*.whl"))
    _run(clean_env / "bin" / "python", "-m", "pip", "install", "--quiet", f"{wheel}[server]")
    assert "fastapi" in _installed(clean_env) and "psycopg" not in _installed(clean_env)
    assert "--robots DIR" in _run(clean_env / "bin" / "posekit", "up", "--help")
    port = free_port()
    server = subprocess.Popen(
        [clean_env / "bin" / "posekit", "up", "--port", str(port), "--robot", "arm7"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 300
        while True:
            assert server.poll() is None, server.communicate()[0]
            try:
                sessions = httpx.get(f"http://127.0.0.1:{port}/api/sessions", timeout=5).json()
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.5)
        assert [session["robot"] for session in sessions] == ["arm7"]
    finally:
        server.terminate()
        server.wait(timeout=60)
