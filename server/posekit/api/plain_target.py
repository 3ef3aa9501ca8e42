"""A stream target message in its common form, read without pydantic.

A client dragging a gizmo sends ``{"type": "target", "task": name, "position": [x, y,
z], "wxyz": [w, x, y, z], "ref": n}`` many times a second, and past saturation most of
them are replaced by a newer one before they are applied (:mod:`~posekit.api.target_credit`).
Checking each against :class:`~posekit.api.stream_protocol.TargetMessage` with pydantic
and building its model cost more than everything else posekit does for it; so the
message is parsed once (msgspec, to plain Python values) and :func:`plain_target` takes
it when it is in this common form — and only when pydantic would accept it with the very
same values:

- a JSON object with ``type`` ``"target"``, a ``task`` matching ``NAME_PATTERN``, no
  keys but ``type``, ``task``, ``ref`` and the float triples and quadruples;
- ``position`` / ``direction``: exactly 3 numbers, ``wxyz``: exactly 4, each a JSON
  float (not an integer, not a boolean: those are left to pydantic's strict rules)
  within ±``MAX_COORDINATE`` (NaN fails the comparison);
- ``ref``: absent, null, a boolean, an integer, a finite float, or a string of at most
  128 characters.

Anything else — ``q``, ``keyframe``, nulls, integers among the floats, a ping, a bad
message — returns None, and the caller validates the raw message with pydantic as
before: same values, same error messages. (msgspec and pydantic read JSON alike where
this module accepts it: the last of repeated keys wins, floats are rounded correctly,
invalid text or numbers out of range are refused — those go to pydantic too.)
"""

from __future__ import annotations

import math
import re
from typing import Any, NamedTuple

import msgspec

from posekit.sessions.types import MAX_COORDINATE, NAME_PATTERN

_decode = msgspec.json.Decoder().decode
_name = re.compile(NAME_PATTERN.removeprefix("^").removesuffix("$")).fullmatch
_FLOATS = {"position": 3, "direction": 3, "wxyz": 4}
"""Target fields taken here, with the number of floats each holds."""
_REF_MAX_CHARS = 128


class PlainTarget(NamedTuple):
    """A target message's task, its given target fields (by name) and its ``ref``."""

    task: str
    fields: dict[str, list[float]]
    ref: Any


def parse(raw: str | bytes) -> Any:
    """The JSON message as Python values; None when it is not valid JSON (pydantic then
    says why)."""
    try:
        return _decode(raw)
    except msgspec.DecodeError:
        return None


def plain_target(data: Any) -> PlainTarget | None:
    """``data`` (a parsed message) as a target, when it is one in the common form (see
    the module docstring); else None."""
    if type(data) is not dict or data.get("type") != "target":
        return None
    task = data.get("task")
    if type(task) is not str or _name(task) is None:
        return None
    fields: dict[str, list[float]] = {}
    for key, value in data.items():
        if key in ("type", "task"):
            continue
        if key == "ref":
            if not _plain_ref(value):
                return None
            continue
        length = _FLOATS.get(key)
        if length is None or type(value) is not list or len(value) != length:
            return None
        for x in value:
            if type(x) is not float or not -MAX_COORDINATE <= x <= MAX_COORDINATE:
                return None
        fields[key] = value
    return PlainTarget(task, fields, data.get("ref"))


def _plain_ref(ref: Any) -> bool:
    kind = type(ref)
    if kind is str:
        return len(ref) <= _REF_MAX_CHARS
    if kind is float:
        return math.isfinite(ref)
    return ref is None or kind is int or kind is bool
