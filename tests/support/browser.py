"""Debian's chromium for the browser tests."""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = "/usr/bin/chromium"


def require_chromium() -> None:
    """Browser tests need Debian's chromium; CI installs it, elsewhere they skip."""
    if shutil.which("chromium") or os.path.exists(CHROMIUM):
        return
    message = "Debian's chromium is not installed (make test installs it)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)
