"""One request to a short-lived child process: ``python -I <worker>``, JSON in on
stdin, JSON out on stdout (the compile and mesh-conversion children of uploads)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


class ChildTimedOut(Exception):
    """The child did not answer within its time."""


class ChildStopped(Exception):
    """The child ended without an answer (out of memory, a crash)."""

    def __init__(self, returncode: int) -> None:
        super().__init__(f"exit code {returncode}")
        self.returncode = returncode


def ask_child(
    worker: Path,
    request: dict[str, Any],
    timeout_s: float,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> Any:
    """The worker's JSON answer to ``request``; :class:`ChildTimedOut` or
    :class:`ChildStopped` when there is none."""
    try:
        done = subprocess.run(
            [sys.executable, "-I", str(worker)],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            timeout=timeout_s,
            cwd=cwd,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ChildTimedOut() from None
    try:
        return json.loads(done.stdout)
    except ValueError:
        raise ChildStopped(done.returncode) from None
