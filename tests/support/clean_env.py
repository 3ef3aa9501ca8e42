"""posekit as users install it: a wheel built from the checkout, installed in a new
virtualenv with only what is asked for (the engine alone by default)."""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run(*command: str | Path, cwd: Path | None = None, timeout: float = 900) -> str:
    """A command's output; its output and errors in the failure when it fails."""
    result = subprocess.run(
        [str(part) for part in command], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, f"{command}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout


def build_dist(out: Path) -> Path:
    """``python -m build`` of the checkout into ``out``: a wheel and an sdist."""
    run(sys.executable, "-m", "build", "--outdir", out, REPO)
    return out


def clean_venv(home: Path, wheel: Path, *extra: str) -> Path:
    """A new virtualenv at ``home`` with ``wheel`` (and the ``extra`` requirements)
    installed; its ``bin`` folder."""
    venv.create(home, with_pip=True)
    run(home / "bin" / "python", "-m", "pip", "install", "--quiet", wheel, *extra)
    return home / "bin"


def installed(bin_dir: Path) -> set[str]:
    """The distributions a virtualenv holds, by lower-case name."""
    listed = run(bin_dir / "python", "-m", "pip", "list", "--format=freeze")
    return {line.split("==")[0].lower() for line in listed.splitlines() if "==" in line}
