"""Values that cross the pipe between the server and a solver process thousands of times
a second pickle compactly and come back equal; the JSON state message is exact."""

from __future__ import annotations

import json
import math
import pickle
import pickletools

import numpy as np
from posekit.sessions import SessionState
from posekit.sessions.changes import SetTarget
from posekit.sessions.kinds import Target
from posekit.sessions.kinds.target import DirectionTarget, PointTarget, PoseTarget, PostureTarget
from posekit.sessions.state import STATE_FIELDS


def a_state() -> SessionState:
    """A state whose every field differs from its default."""
    return SessionState(
        seq=7,
        time=1.5e9,
        q=[0.1, -0.2, 0.3],
        errors={"ee": 0.25, "posture": None},
        converged=True,
        status="converged",
        error="why",
        solve_us=12.5,
        ref="drag-3",
        revision=42,
        throttled=True,
        rate_hz=30.0,
    )


def test_a_state_pickles_with_every_field_and_its_encodings() -> None:
    state = a_state()
    encoded = state.json()
    copy = pickle.loads(pickle.dumps(state))
    assert copy == state
    assert [getattr(copy, name) for name in STATE_FIELDS] == [
        getattr(state, name) for name in STATE_FIELDS
    ]
    assert copy.json() is not None and copy.json() == encoded


def test_the_json_state_message_is_the_fields_exactly() -> None:
    state = a_state()
    state.q = [0.1, 1e-300, -0.0, 5e20, float(np.float64(0.7))]
    message = json.loads(state.json())
    assert message == {"type": "state", **{name: getattr(state, name) for name in STATE_FIELDS}}
    assert [repr(x) for x in message["q"]] == [repr(x) for x in state.q]  # shortest repr


def test_numpy_scalars_and_non_finite_numbers_encode_as_json() -> None:
    state = a_state()
    state.errors = {"ee": np.float64(0.5), "posture": math.nan}  # type: ignore[dict-item]
    assert json.loads(state.json())["errors"] == {"ee": 0.5, "posture": None}


def test_targets_pickle_as_their_type_and_set_fields() -> None:
    targets = [
        Target.model_construct(position=[0.1, 0.2, 0.3]),
        PoseTarget.model_construct(position=[0.1, 0.2, 0.3], wxyz=[1.0, 0.0, 0.0, 0.0]),
        PointTarget(position=[0.0, 0.0, 1.0]),
        PostureTarget(keyframe="home"),
    ]
    for target in targets:
        copy = pickle.loads(pickle.dumps(target))
        assert type(copy) is type(target)
        assert copy == target
        assert copy.model_fields_set == target.model_fields_set
        assert copy.model_dump() == target.model_dump()


def test_a_set_target_change_pickles_naming_one_global_and_comes_back_equal() -> None:
    for target in (
        PoseTarget.model_construct(position=[0.1, 0.2, 0.3], wxyz=[1.0, 0.0, 0.0, 0.0]),
        DirectionTarget.model_construct(direction=[0.0, 0.0, 1.0]),
        PostureTarget.model_construct(q=[0.0, 0.5]),
        Target.model_construct(keyframe="home"),
    ):
        change = SetTarget("ee", target, {"drag": 3})
        for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
            data = pickle.dumps(change, protocol=protocol)
            copy = pickle.loads(data)
            assert type(copy) is SetTarget and copy == change
            assert type(copy.target) is type(target)
            assert copy.target.model_fields_set == target.model_fields_set
            globals_named = [op for op, _, _ in pickletools.genops(data) if "GLOBAL" in op.name]
            assert len(globals_named) == 1  # the restoring function only
