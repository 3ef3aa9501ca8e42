"""Polling until a condition holds."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_for(
    condition: Callable[[], Any], timeout: float = 10.0, what: str = "condition", poll: float = 0.02
) -> Any:
    """Poll ``condition`` every ``poll`` seconds until it is truthy (returned); fail after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not met within {timeout} s")
        time.sleep(poll)
