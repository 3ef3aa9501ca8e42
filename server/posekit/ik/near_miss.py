"""Suggestions for a name that is almost right: ``"ur5e"`` → ``universal_robots_ur5e``,
``"positon_cost"`` → ``position_cost``, ``"gripper"`` → ``left_gripper``."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

MAX_SUGGESTED = 3
SIMILARITY = 0.75
"""difflib's ratio a name must reach to be suggested for a misspelling."""
_WORDS = re.compile(r"[^a-z0-9]+")


def close_names(name: str, candidates: Iterable[str]) -> list[str]:
    """The candidates ``name`` most likely meant, best first: those it is a whole word
    of (``ur5e`` in ``universal_robots_ur5e``), then misspellings of it (difflib)."""
    known = [c for c in dict.fromkeys(candidates) if c and c != name]
    lowered = name.lower()
    words = [c for c in known if lowered and lowered in _WORDS.split(c.lower())]
    spelled = difflib.get_close_matches(name, known, n=MAX_SUGGESTED, cutoff=SIMILARITY)
    return list(dict.fromkeys([*sorted(words, key=len), *spelled]))[:MAX_SUGGESTED]


def _listed(name: str, candidates: Iterable[str]) -> str:
    close = [repr(c) for c in close_names(str(name), candidates)]
    if len(close) < 2:
        return "".join(close)
    return f"{', '.join(close[:-1])} or {close[-1]}"


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """``"; did you mean 'a' or 'b'?"`` for :func:`close_names`, or ``""``."""
    listed = _listed(name, candidates)
    return f"; did you mean {listed}?" if listed else ""


def did_you_mean_sentence(name: str, candidates: Iterable[str]) -> str:
    """``" Did you mean 'a' or 'b'?"`` for :func:`close_names`, or ``""``."""
    listed = _listed(name, candidates)
    return f" Did you mean {listed}?" if listed else ""
