"""Fixtures of the engine tests."""

from __future__ import annotations

from types import ModuleType

import pytest
from mink_reference import require_mink


@pytest.fixture
def mink() -> ModuleType:
    """mink 1.3.0 (fails in CI, skips elsewhere, when it is not installed)."""
    return require_mink()
