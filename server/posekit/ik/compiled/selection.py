"""The process-wide choice of IK engine: ``"compiled"`` (default) or ``"python"``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

ENGINES = ("compiled", "python")
ENGINE = ["compiled"]
"""The current engine, in a one-element list: read ``ENGINE[0]`` on a hot path (one
subscript instead of a call); change it with :func:`set_engine` only."""


def set_engine(name: str) -> str:
    """Make ``solve_ik`` (and ``Configuration.integrate_inplace``) use engine ``name``.

    ``"compiled"`` runs covered steps as one compiled call; ``"python"`` always runs
    the reference implementation. Returns the engine that was set before.

    Raises:
        ValueError: ``name`` is not one of :data:`ENGINES`.
    """
    if name not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {name!r}")
    previous, ENGINE[0] = ENGINE[0], name
    return previous


def current_engine() -> str:
    """The engine ``solve_ik`` uses: ``"compiled"`` or ``"python"``."""
    return ENGINE[0]


@contextmanager
def using_engine(name: str) -> Iterator[None]:
    """Use engine ``name`` inside the ``with`` block, and the one before it after.

    Raises:
        ValueError: ``name`` is not one of :data:`ENGINES`.
    """
    previous = set_engine(name)
    try:
        yield
    finally:
        set_engine(previous)
