"""Pieces of the README the tests run as written."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def engine_snippet() -> str:
    """The first Python block of the README's "The IK engine" section."""
    section = README.read_text().split("\n## The IK engine\n", 1)[1]
    return section.split("```python\n", 1)[1].split("\n```", 1)[0]
