"""posekit has every public name, signature and attribute shape of mink 1.3.0.

``bench/mink_api_diff.py`` walks mink's public modules and lists what posekit lacks;
this test fails on any gap that is not on its documented allow-list (or on an
allowance that is no gap any more), and checks that mink stays a test-only dependency.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from types import ModuleType

import numpy as np
from support.models import REPO_ROOT


def _api_diff() -> ModuleType:
    bench = str(REPO_ROOT / "bench")
    if bench not in sys.path:
        sys.path.append(bench)  # mink_api_diff imports its probes module from there
    path = REPO_ROOT / "bench" / "mink_api_diff.py"
    spec = importlib.util.spec_from_file_location("mink_api_diff", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_posekit_lacks_nothing_of_minks_api(mink: ModuleType) -> None:
    diff = _api_diff()
    found = diff.gaps()
    unexpected, stale = diff.report(found)
    assert not unexpected, "\n".join(map(str, unexpected))
    assert not stale, f"allowed but no longer different: {stale}"
    assert diff.public_modules(mink)[:1] == ["mink"]
    walked = set(diff.public_modules(mink))
    assert {"mink.lie", "mink.constants", "mink.limits.collision_avoidance_limit"} <= walked


def test_the_walk_finds_gaps() -> None:
    """The comparisons bite: a renamed parameter, a missing default, another shape."""
    diff = _api_diff()

    def reference(model: object, gain: float = 0.95, *, margin: float = 0.0) -> None: ...

    def renamed(model: object, ratio: float = 0.95, *, margin: float = 0.0) -> None: ...

    def no_default(model: object, gain: float, *, margin: float = 0.0) -> None: ...

    def lenient(
        model: object, gain: float = 0.95, extra: int = 1, *, margin: float = 0.0
    ) -> None: ...

    assert diff.signature_gaps(reference, renamed)
    assert diff.signature_gaps(reference, no_default)
    assert list(diff.import_gaps(["mink.tasks.no_such_task"]))
    assert not list(diff.import_gaps(["mink.tasks.frame_task", "mink.lie.se3"]))
    assert not diff.signature_gaps(reference, lenient)
    assert diff.shape_of(None) != diff.shape_of(np.zeros((0, 3)))
    assert diff.shape_of(np.zeros(3)) != diff.shape_of(np.zeros(4))


def test_readme_lists_the_allowed_differences() -> None:
    readme = (REPO_ROOT / "README.md").read_text()
    section = readme.split("Differences from mink", 1)[1].split("\n### ", 1)[0]
    for key in _api_diff().ALLOWED:
        owner = key.split()[-1].split(".")[-2]  # "signature mink.lie.se3.SE3.__init__" -> SE3
        assert re.search(rf"`{owner}`", section), key


def test_posekit_never_imports_mink_nor_the_web_layers() -> None:
    """Importing posekit and solving a step loads no mink module, and nothing of the
    server's or viewer's extras (fresh interpreter)."""
    script = """
import sys
import numpy as np
import posekit
from posekit.demo import builtin_model
model = builtin_model("arm7")
configuration = posekit.Configuration(model)
task = posekit.FrameTask("ee", "site", position_cost=1.0, orientation_cost=1.0)
task.set_target(posekit.SE3.from_translation(np.array([0.0, 0.0, 0.1])))
limits = [posekit.ConfigurationLimit(model), posekit.VelocityLimit(model, {"joint1": 1.0})]
velocity = posekit.solve_ik(configuration, [task], 0.01, "daqp", limits=limits)
assert np.all(np.isfinite(velocity))
others = ("mink", "fastapi", "starlette", "uvicorn", "pydantic", "viser", "trimesh", "psycopg")
loaded = sorted(name for name in sys.modules if name.split(".")[0] in others)
assert not loaded, loaded
print("ok")
"""
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr
