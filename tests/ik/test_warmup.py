"""``python -m posekit.warmup`` (the Docker build, the test suite) compiles every Numba
kernel of the engine, so none compiles on first use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# Lists the Numba dispatchers defined in posekit.* and, after the warm-up, those that
# have no compiled signature. Run with an empty NUMBA_CACHE_DIR: every kernel is
# compiled from scratch, so kernels called only from other kernels get their signatures
# too (loaded from a cache, only the kernels called from Python would).
CHECK = """
import importlib, json, pkgutil
from numba.core.dispatcher import Dispatcher
import posekit
from posekit.warmup import compile_kernels

kernels = {}
for info in pkgutil.walk_packages(posekit.__path__, "posekit."):
    if info.name == "posekit.cli":
        continue
    for name, value in vars(importlib.import_module(info.name)).items():
        if isinstance(value, Dispatcher) and value.py_func.__module__ == info.name:
            kernels[f"{info.name}.{name}"] = value
compile_kernels()
print(json.dumps({"kernels": sorted(kernels),
                  "uncompiled": sorted(n for n, k in kernels.items() if not k.signatures)}))
"""


def test_the_warm_up_compiles_every_kernel(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", CHECK],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")},
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    names = {name.rsplit(".", 1)[1] for name in report["kernels"]}
    # the kernels of frame, look-at and axis-align tasks and of the broadphase
    assert {"look_at_kernel", "axis_align_kernel", "candidate_pairs"} <= names
    assert len(report["kernels"]) >= 15
    assert report["uncompiled"] == []
