"""Callgrind's switch for the deterministic benchmarks (``bench/*_pass.py``)."""

from __future__ import annotations

import os
import subprocess
import time


def instrument() -> None:
    """Switch callgrind's instrumentation on when ``CG_TOGGLE`` is set (the benchmark runs
    under ``valgrind --tool=callgrind --instr-atstart=no``; the collection is then limited
    to ``functools.reduce`` by ``--toggle-collect``). Without valgrind it does nothing."""
    if os.environ.get("CG_TOGGLE"):
        command = ["callgrind_control", "-i", "on", str(os.getpid())]
        subprocess.run(command, check=False, capture_output=True)
        time.sleep(1.0)
