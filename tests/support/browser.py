"""The browser of the browser tests: a Chromium the machine has.

Looked for as ``tools/ensure_browser.sh`` (the browser step of ``make test``, which
installs Debian's chromium through apt when none is there and apt is) looks for it:
``POSEKIT_BROWSER`` (a path or a command name), else ``chromium``, ``chromium-browser``,
``google-chrome``, ``google-chrome-stable`` on the ``PATH``. Without a browser the
browser tests skip with the reason, except under ``CI``, where they fail.
"""

from __future__ import annotations

import os
import shutil

import pytest

BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_browser() -> str | None:
    """The path of the browser to drive, or None when the machine has none."""
    chosen = os.environ.get("POSEKIT_BROWSER")
    if chosen:
        return shutil.which(chosen)
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def require_browser() -> str:
    """The browser's path; skips the test (fails it under ``CI``) when there is none."""
    found = find_browser()
    if found:
        return found
    chosen = os.environ.get("POSEKIT_BROWSER")
    message = (
        f"POSEKIT_BROWSER={chosen!r} is not an executable browser"
        if chosen
        else f"no Chromium browser found ({', '.join(BROWSER_NAMES)} on the PATH, or "
        "POSEKIT_BROWSER); `make test` installs Debian's chromium where apt exists"
    )
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)
