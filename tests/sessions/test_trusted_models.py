"""Models built from valid values on the hot path (posekit.sessions.kinds.trusted) are
exactly what pydantic's ``model_construct`` and ``model_copy`` would build."""

from __future__ import annotations

from typing import Any

import pytest
from posekit.sessions.kinds.frame import FrameTaskSpec
from posekit.sessions.kinds.target import (
    TARGET_MODELS,
    DirectionTarget,
    PointTarget,
    PoseTarget,
    PostureTarget,
    Target,
)
from posekit.sessions.kinds.trusted import construct, replaced
from posekit.sessions.session_spec import SessionSpec
from pydantic import BaseModel


def same(a: BaseModel, b: BaseModel) -> None:
    assert type(a) is type(b) and a == b
    assert list(a.__dict__.items()) == list(b.__dict__.items())  # fields in order
    assert a.model_fields_set == b.model_fields_set
    assert a.__pydantic_extra__ == b.__pydantic_extra__
    assert a.__pydantic_private__ == b.__pydantic_private__
    assert a.model_dump_json() == b.model_dump_json()


CASES = [
    (Target, {}),
    (Target, {"position": [0.1, 0.2, 0.3], "wxyz": None}),
    (Target, {"keyframe": "home"}),
    (PoseTarget, {"position": [0.1, 0.2, 0.3], "wxyz": [1.0, 0.0, 0.0, 0.0]}),
    (PoseTarget, {"wxyz": [1.0, 0.0, 0.0, 0.0]}),
    (PointTarget, {"position": [0.1, 0.2, 0.3]}),
    (DirectionTarget, {"direction": [0.0, 0.0, 1.0]}),
    (PostureTarget, {"q": [0.0, 1.0]}),
]


@pytest.mark.parametrize(("model", "values"), CASES)
def test_construct_builds_what_model_construct_builds(
    model: type[BaseModel], values: dict[str, Any]
) -> None:
    same(construct(model, **values), model.model_construct(**values))


def test_every_target_model_is_tried() -> None:
    assert {model for model, _ in CASES} == set(TARGET_MODELS)


def test_construct_falls_back_for_models_with_required_or_mutable_defaults() -> None:
    values = {"robot": "arm7"}
    same(construct(SessionSpec, **values), SessionSpec.model_construct(**values))


def test_replaced_copies_like_model_copy_and_leaves_the_original() -> None:
    spec = FrameTaskSpec.model_validate({"type": "frame", "params": {"frame": "ee"}})
    target = PoseTarget.model_construct(position=[0.1, 0.2, 0.3], wxyz=[1.0, 0.0, 0.0, 0.0])
    copy = replaced(spec, target=target, name="ee")
    same(copy, spec.model_copy(update={"target": target, "name": "ee"}))
    assert spec.target is None and spec.name is None
    assert "target" not in spec.model_fields_set
    assert copy.params is spec.params  # shallow, like model_copy
