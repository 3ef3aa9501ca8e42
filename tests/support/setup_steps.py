"""Running a ``tools/ensure_*.sh`` step of ``make test`` against fake tools: a folder of
shell scripts is the whole PATH (no real browser, nginx, compose CLI, apt or sudo)."""

from __future__ import annotations

import subprocess
from pathlib import Path

SH = "/bin/sh"
TOOLS = Path(__file__).resolve().parents[2] / "tools"


def fake_tool(folder: Path, name: str, body: str) -> Path:
    """An executable shell script ``folder/name`` running ``body``."""
    path = folder / name
    path.write_text(f"#!{SH}\n{body}\n")
    path.chmod(0o755)
    return path


def run_step(script: str, path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``tools/<script>`` with only ``path`` on the PATH and ``env`` set."""
    return subprocess.run(
        [SH, str(TOOLS / script)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": str(path), **env},
    )
