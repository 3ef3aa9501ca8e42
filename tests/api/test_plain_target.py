"""A stream target in its common form is read without pydantic (posekit.api.plain_target),
with exactly the values pydantic reads; anything else is left to pydantic."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest
from posekit.api.plain_target import plain_target
from posekit.api.stream_protocol import CLIENT_MESSAGE, TargetMessage
from posekit.sessions.kinds.target import TARGET_FIELDS


def _pydantic(raw: str) -> tuple[str, dict[str, Any], Any]:
    message = CLIENT_MESSAGE.validate_json(raw)
    assert isinstance(message, TargetMessage)
    fields = {k: v for k in TARGET_FIELDS if (v := getattr(message, k)) is not None}
    return message.task, fields, message.ref


def _same(a: Any, b: Any) -> bool:
    """Equal values of the same types, all the way down (1 == 1.0 == True is not enough,
    nor is 0.0 == -0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):  # -0.0 == 0.0, but not the same float
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return bool(a == b)


COMMON = [
    '{"type": "target", "task": "ee", "position": [0.1, -0.2, 0.3], "ref": 7}',
    '{"type":"target","task":"left.hand-2","wxyz":[1.0,0.0,0.0,0.0],"position":[1e-3,2.5,-1e4]}',
    '{"task": "look", "type": "target", "direction": [0.0, -0.0, 1.0], "ref": "drag-1"}',
    '{"type": "target", "task": "ee", "position": [0.1, 0.2, 0.3], "ref": 2.5}',
    '{"type": "target", "task": "ee", "position": [0.1, 0.2, 0.3], "ref": true}',
    '{"type": "target", "task": "ee", "position": [0.1, 0.2, 0.3], "ref": null}',
    '{"type": "target", "task": "ee", "ref": 123456789012345678901234567890}',
    '{"type": "target", "task": "ee"}',
    '{"type": "target", "task": "ee", "position": [9, 9, 9], "position": [0.5, 0.25, 1.5]}',
    '{"type": "target", "task": "\\u0065e", "position": [0.1, 0.2, 0.3], "ref": "\\u00e9t\\u00e9"}',
    '{"type": "target", "task": "ee", "position": [0.1000000000000000055511151231257827, '
    "2.2250738585072011e-308, 9999.999999999999]}",
    '{"type": "target", "task": "ee", "position": [1, -0, 10000], "wxyz": [1, 0, 0.0, -0.0]}',
]


@pytest.mark.parametrize("raw", COMMON)
def test_a_target_in_the_common_form_is_read_as_pydantic_reads_it(raw: str) -> None:
    plain = plain_target(raw)
    assert plain is not None
    assert _same(plain, _pydantic(raw))


def test_random_floats_are_read_to_the_same_doubles() -> None:
    rng = random.Random(12)
    for _ in range(2000):
        values = [rng.uniform(-1e4, 1e4) * 10.0 ** rng.randint(-12, 0) for _ in range(4)]
        text = ", ".join(rng.choice([repr(v), f"{v:.17e}", f"{v:.6g}"]) for v in values)
        raw = f'{{"type": "target", "task": "ee", "wxyz": [{text}]}}'
        plain = plain_target(raw)  # "%.6g" may write an integer: read as pydantic does
        assert plain is not None
        assert _same(plain[1], _pydantic(raw)[1])


LEFT_TO_PYDANTIC = [
    '{"type": "target", "task": "ee", "position": [true, 0.2, 0.3]}',
    '{"type": "target", "task": "ee", "position": [12345678901234567890123, 0.2, 0.3]}',
    '{"type": "target", "task": "ee", "position": null}',
    '{"type": "target", "task": "ee", "position": [0.1, 0.2]}',
    '{"type": "target", "task": "ee", "wxyz": [1.0, 0.0, 0.0]}',
    '{"type": "target", "task": "ee", "position": [10000.5, 0.2, 0.3]}',
    '{"type": "target", "task": "ee", "position": [0.1, 0.2, 0.3], "ref": [1]}',
    '{"type": "target", "task": "ee", "ref": "' + "x" * 129 + '"}',
    '{"type": "target", "task": "ee", "q": [0.1, 0.2]}',
    '{"type": "target", "task": "ee", "keyframe": "home"}',
    '{"type": "target", "task": "ee", "position": [0.1, 0.2, 0.3], "extra": 1}',
    '{"type": "target", "task": "e e", "position": [0.1, 0.2, 0.3]}',
    '{"type": "target", "task": "ee\\n", "position": [0.1, 0.2, 0.3]}',
    '{"type": "target", "task": "' + "a" * 65 + '"}',
    '{"type": "target", "position": [0.1, 0.2, 0.3]}',
    '{"type": "target", "task": 5}',
    '{"type": "ping", "ref": 1}',
    '{"type": "target", "task": "ee", "ref": 1e400}',
    '{"type": "target", "task": "ee", "position": [NaN, 0.2, 0.3]}',
    '{"type": "target", "task": "ee", "ref": "\\ud800"}',
    '{"type": "target", "task": "ee"',
    "[1, 2]",
    '"target"',
]


@pytest.mark.parametrize("raw", LEFT_TO_PYDANTIC)
def test_anything_else_is_left_to_pydantic(raw: str) -> None:
    assert plain_target(raw) is None


def test_pydantic_still_refuses_what_it_refused() -> None:
    refused = [r for r in LEFT_TO_PYDANTIC if not _accepted(r)]
    assert len(refused) >= 15  # e.g. a null position is not one of them
    assert _accepted(LEFT_TO_PYDANTIC[2])


def _accepted(raw: str) -> bool:
    try:
        CLIENT_MESSAGE.validate_json(raw)
    except ValueError:
        return False
    return True


def test_bytes_are_read_like_text() -> None:
    raw = json.dumps({"type": "target", "task": "ee", "position": [0.1, 0.2, 0.3], "ref": 1})
    assert plain_target(raw.encode()) == plain_target(raw)
