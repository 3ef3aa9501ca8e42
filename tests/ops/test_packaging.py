"""posekit as users install it: a wheel and an sdist built from the checkout, the wheel
installed in a clean virtualenv. ``pip install posekit`` is the engine alone (no web
framework) and runs the README's engine snippet; the ``server`` extra adds ``posekit up``."""

from __future__ import annotations

import subprocess
import tarfile
import zipfile
from pathlib import Path

from support.clean_env import clean_venv, installed, run
from support.ports import free_port
from support.processes import first_answer
from support.readme import engine_snippet

WEB_PACKAGES = {"fastapi", "starlette", "uvicorn", "pydantic", "viser", "psycopg", "trimesh"}


def test_the_sdist_holds_what_the_wheel_is_built_from(dist: Path) -> None:
    wheel = zipfile.ZipFile(next(dist.glob("*.whl"))).namelist()
    sdist = tarfile.open(next(dist.glob("*.tar.gz"))).getnames()
    for shipped in ("posekit/models/arm7.xml", "posekit_viewer/static/index.html"):
        assert shipped in wheel
    for source in ("server/posekit/ik/solve.py", "models/arm7.xml", "README.md", "CHANGELOG.md"):
        assert any(name.endswith("/" + source) for name in sdist), source


def test_the_engine_installs_alone_and_runs_the_readme_snippet(
    engine_env: Path, tmp_path: Path
) -> None:
    assert not WEB_PACKAGES & installed(engine_env)
    (tmp_path / "snippet.py").write_text(engine_snippet())
    printed = run(engine_env / "python", "snippet.py", cwd=tmp_path)
    assert float(printed.split()[-1]) < 1e-4


def test_posekit_up_without_the_server_extra_says_what_to_install(engine_env: Path) -> None:
    result = subprocess.run(
        [engine_env / "posekit", "up", "--robot", "none"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "pip install 'posekit[server]'" in result.stderr


def test_the_server_extra_gives_posekit_up(dist: Path, tmp_path: Path) -> None:
    wheel = next(dist.glob("*.whl"))
    served = clean_venv(tmp_path / "venv", Path(f"{wheel}[server]"))
    assert "fastapi" in installed(served) and "psycopg" not in installed(served)
    assert "--robots DIR" in run(served / "posekit", "up", "--help")
    port = free_port()
    server = subprocess.Popen(
        [served / "posekit", "up", "--port", str(port), "--robot", "arm7"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        sessions = first_answer(server, f"http://127.0.0.1:{port}/api/sessions").json()
        assert [session["robot"] for session in sessions] == ["arm7"]
    finally:
        server.terminate()
        server.wait(timeout=60)
