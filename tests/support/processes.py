"""Waiting for a program the test started to serve HTTP."""

from __future__ import annotations

import subprocess
import time

import httpx


def first_answer(process: subprocess.Popen[str], url: str, timeout: float = 300) -> httpx.Response:
    """The first answer ``url`` gives while ``process`` runs (its output in the failure
    when it ends first, or when nothing answers within ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while True:
        assert process.poll() is None, process.communicate()[0]
        try:
            return httpx.get(url, timeout=5)
        except httpx.TransportError:
            assert time.monotonic() < deadline, f"nothing answered {url} in {timeout:g} s"
            time.sleep(0.5)
