"""mink 1.3.0, the reference posekit's engine is compared with (a test-only dependency).

``require_mink()`` returns the module. mink is in the ``dev`` extra, so CI always has
it: under ``CI=1`` a missing or wrong mink fails the test; elsewhere it skips with the
reason (never silently).
"""

from __future__ import annotations

import os
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType

import pytest

REFERENCE_VERSION = "1.3.0"


def require_mink() -> ModuleType:
    """The installed mink 1.3.0 module; fail in CI, skip elsewhere, when it is not there."""
    try:
        installed = version("mink")
    except PackageNotFoundError:
        installed = None
    if installed != REFERENCE_VERSION:
        message = (
            f"mink=={REFERENCE_VERSION} (the reference, in the dev extra) is not installed"
            + (f"; found {installed}" if installed else "")
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    import mink

    return mink
