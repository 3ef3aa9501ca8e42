"""The README's engine snippet runs as written, from any directory, once posekit is
installed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from support.readme import engine_snippet


def test_the_readme_engine_snippet_runs_from_anywhere(tmp_path: Path) -> None:
    snippet = engine_snippet()
    assert "solve_ik" in snippet
    (tmp_path / "snippet.py").write_text(snippet)
    result = subprocess.run(
        [sys.executable, "snippet.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    printed = re.findall(r"[-+0-9.e]+", result.stdout.strip())
    assert len(printed) == 1 and float(printed[0]) < 1e-4, result.stdout
