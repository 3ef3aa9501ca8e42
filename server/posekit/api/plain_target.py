"""A stream target message in its common form, read without pydantic.

A client dragging a gizmo sends ``{"type": "target", "task": name, "position": [x, y,
z], "wxyz": [w, x, y, z], "ref": n}`` many times a second, and past saturation most of
them are replaced by a newer one before they are applied (:mod:`~posekit.api.target_credit`).
Checking each against :class:`~posekit.api.stream_protocol.TargetMessage` with pydantic
and building its model cost more than everything else posekit does for it; so
:func:`plain_target` reads the message with msgspec against a schema of the common form
(a struct decoded in C) and takes it only when pydantic would accept it with the very
same values:

- a JSON object with ``type`` ``"target"``, a ``task`` matching ``NAME_PATTERN``, no
  keys but ``type``, ``task``, ``ref`` and the number triples and quadruples;
- ``position`` / ``direction``: exactly 3 numbers, ``wxyz``: exactly 4, each within
  ±``MAX_COORDINATE`` (an integer is read as the float pydantic makes of it; a boolean
  is refused, as pydantic refuses it);
- ``ref``: absent, null, a boolean, an integer, a finite float, or a string of at most
  128 characters.

Anything else — ``q``, ``keyframe``, nulls, a ping, a bad message — returns None, and
the caller validates the raw message with pydantic as before: same values, same error
messages. (msgspec and pydantic read JSON alike where this module accepts it: the last
of repeated keys wins, floats are rounded correctly, invalid text or numbers out of
range are refused — those go to pydantic too.)
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from posekit.sessions.types import MAX_COORDINATE, NAME_PATTERN

_name = re.compile(NAME_PATTERN.removeprefix("^").removesuffix("$")).fullmatch
_REF_MAX_CHARS = 128
_NAMES_REMEMBERED = 4096
_names: dict[str, bool] = {}
"""Task names seen, and whether each matches ``NAME_PATTERN`` (at most
``_NAMES_REMEMBERED``; a name past them is matched each time)."""

_Coordinate = Annotated[float, msgspec.Meta(ge=-MAX_COORDINATE, le=MAX_COORDINATE)]
_Triple = Annotated[list[_Coordinate], msgspec.Meta(min_length=3, max_length=3)]
_Quadruple = Annotated[list[_Coordinate], msgspec.Meta(min_length=4, max_length=4)]


class _CommonTarget(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """The common form's schema, as msgspec reads it (the task name and ``ref`` are
    checked after: ``re.search`` and msgspec's integers differ from pydantic's). Not
    tracked by the garbage collector: decoded JSON holds no cycles."""

    type: Literal["target"]
    task: str
    position: _Triple | UnsetType = UNSET
    direction: _Triple | UnsetType = UNSET
    wxyz: _Quadruple | UnsetType = UNSET
    ref: Any = None


_decode = msgspec.json.Decoder(_CommonTarget).decode


PlainTarget = tuple[str, dict[str, list[float]], Any]
"""A target message's task, its given target fields (by name) and its ``ref``: a plain
tuple (building a named tuple would cost some 1.5k instructions a message more)."""


def plain_target(raw: str | bytes) -> PlainTarget | None:
    """The message ``raw`` as a target, when it is one in the common form (see the module
    docstring); else None."""
    try:
        message = _decode(raw)
    except msgspec.DecodeError:  # invalid JSON, or not the common form
        return None
    task, ref = message.task, message.ref
    named = _names.get(task)
    if not (_valid_name(task) if named is None else named):
        return None
    # The usual refs (an integer, none) pass without a call: this runs for every message.
    if type(ref) is not int and ref is not None and not _plain_ref(ref):
        return None
    fields: dict[str, list[float]] = {}
    if message.position is not UNSET:
        fields["position"] = message.position
    if message.direction is not UNSET:
        fields["direction"] = message.direction
    if message.wxyz is not UNSET:
        fields["wxyz"] = message.wxyz
    return (task, fields, ref)


def _valid_name(task: str) -> bool:
    """Whether ``task`` matches ``NAME_PATTERN``; remembered (names are few)."""
    valid = _name(task) is not None
    if len(_names) < _NAMES_REMEMBERED:
        _names[task] = valid
    return valid


def _plain_ref(ref: Any) -> bool:
    kind = type(ref)
    if kind is str:
        return len(ref) <= _REF_MAX_CHARS
    if kind is float:
        return math.isfinite(ref)
    return ref is None or kind is int or kind is bool
