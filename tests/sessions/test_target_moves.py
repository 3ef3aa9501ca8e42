"""The hot path of dragging: a target given as field values (``Session.move_target``, a
stream's target) is the target ``set_target`` makes, refused alike."""

from __future__ import annotations

import math
import operator
import random
from typing import Any

import pytest
from posekit.ik.exceptions import InvalidTarget, PosekitError
from posekit.robots import RobotRegistry
from posekit.sessions import Session, SessionSpec
from posekit.sessions.kinds import Target
from posekit.sessions.kinds.target_shape import unit

REGISTRY = RobotRegistry(menagerie=False)
ARM = REGISTRY.model("arm7")
HOME = ARM.key_qpos[0].tolist()
TASKS = [
    {"name": "ee", "type": "frame", "params": {"frame": "ee"}},
    {"name": "look", "type": "look_at", "params": {"frame": "wrist_cam"}},
    {"name": "com", "type": "com", "params": {"cost": [1, 1, 0]}},
    {"name": "axis", "type": "axis_align", "params": {"frame": "ee", "axis": [0, 0, 1]}},
    {"name": "posture", "type": "posture", "params": {"cost": 1e-3}},
    {"name": "damping", "type": "damping", "params": {"cost": 1e-3}},
]
MOVES: list[tuple[str, dict[str, Any]]] = [
    ("ee", {"position": [0.4, 0.1, 0.45]}),
    ("ee", {"wxyz": [0.0, 2.0, 0.0, 0.0]}),  # normalised
    ("ee", {"position": [0.35, -0.1, 0.5], "wxyz": [0.5, 0.5, 0.5, 0.5]}),
    ("look", {"position": [1.0, 0.5, 0.2]}),
    ("com", {"position": [0.0, 0.1, 0.3]}),
    ("axis", {"direction": [0.0, 3.0, 4.0]}),  # normalised
    ("posture", {"q": [0.1] * 7}),
    ("posture", {"keyframe": "home"}),
]
REFUSED: list[tuple[str, dict[str, Any]]] = [
    ("nope", {"position": [0.0, 0.0, 0.0]}),  # no such task
    ("ee", {"direction": [0.0, 0.0, 1.0]}),  # a field the pose does not take
    ("ee", {"direction": [0.0, 0.0, 1.0], "position": [0.1, 0.2, 0.3]}),
    ("ee", {}),  # no field
    ("ee", {"wxyz": [0.0, 0.0, 0.0, 0.0]}),  # a zero quaternion
    ("axis", {"direction": [0.0, 0.0, 0.0]}),
    ("posture", {"q": [0.0] * 6}),  # not nq values
    ("posture", {"q": [0.0] * 7, "keyframe": "home"}),
    ("posture", {"keyframe": "no_such_keyframe"}),
    ("damping", {"position": [0.0, 0.0, 0.0]}),  # a task without a target
]


def arm_session(session_id: str = "t") -> Session:
    spec = SessionSpec.model_validate({"robot": "arm7", "q": HOME, "tasks": TASKS})
    return Session(session_id, spec, ARM, "arm7")


def engine_targets(session: Session) -> list[Any]:
    """What every engine task holds as its target (read through the kinds)."""
    from posekit.sessions.kinds import task_kind

    specs = {spec.name: spec for spec in session.tasks()}
    return [
        task_kind(specs[name]).read_target(session.engine_task(name)).model_dump()
        for name in ("ee", "look", "com", "axis", "posture")
    ]


def snapshot(session: Session) -> tuple[Any, ...]:
    specs = [
        (spec.model_dump(), spec.target and spec.target.model_fields_set)
        for spec in session.tasks()
    ]
    return specs, engine_targets(session), session.revision, session.state.ref


def test_a_moved_target_is_the_target_set_target_makes() -> None:
    setting, moving = arm_session(), arm_session()
    for ref, (task, given) in enumerate(MOVES):
        returned = setting.set_target(task, Target.model_construct(**given), ref=ref)
        moving.move_target(task, given, ref=ref)
        moved = moving.task(task).target
        assert type(moved) is type(returned) and moved == returned
        assert moved.model_fields_set == returned.model_fields_set
        assert snapshot(moving) == snapshot(setting)
    assert moving.step().q == setting.step().q  # the engine tasks took the same targets
    assert moving.spec() == setting.spec()


def test_a_moved_target_reaches_the_solver_before_the_next_step() -> None:
    """Moved twice, never read: the step solves for the latest target."""
    moving, reference = arm_session(), arm_session()
    moving.move_target("ee", {"position": [0.2, 0.2, 0.2]})
    moving.move_target("ee", {"position": [0.4, 0.1, 0.45]})
    reference.set_target("ee", {"position": [0.4, 0.1, 0.45]})
    assert moving.step().q == reference.step().q


@pytest.mark.parametrize(("task", "given"), REFUSED)
def test_a_refused_move_is_refused_as_set_target_refuses_it_and_changes_nothing(
    task: str, given: dict[str, Any]
) -> None:
    setting, moving = arm_session(), arm_session()
    for session in (setting, moving):
        session.set_target("ee", {"position": [0.4, 0.1, 0.45]}, ref="before")
    moving.move_target("look", {"position": [1.0, 0.5, 0.2]}, ref="moved")  # not read yet
    setting.set_target("look", {"position": [1.0, 0.5, 0.2]}, ref="moved")
    with pytest.raises(PosekitError) as expected:
        setting.set_target(task, Target.model_construct(**given))
    revision = moving.revision
    with pytest.raises(PosekitError) as refused:
        moving.move_target(task, given, ref="refused")
    assert type(refused.value) is type(expected.value)
    assert str(refused.value) == str(expected.value)
    assert moving.revision == revision
    assert snapshot(moving) == snapshot(setting)
    stepped = moving.step()
    assert stepped.q == setting.step().q and stepped.ref == "moved"  # not "refused"


def test_unit_makes_the_floats_of_the_sum_of_squares_in_order() -> None:
    """``unit`` (plain loops on the hot path) gives, bit for bit, what the norm of
    ``sum(map(mul, v, v))`` and a comprehension gave: canonical targets do not change."""
    rng = random.Random(5)
    for size in (3, 4, 7):
        for _ in range(2000):
            values = [rng.uniform(-2.0, 2.0) * 10.0 ** rng.randint(-4, 2) for _ in range(size)]
            norm = math.sqrt(sum(map(operator.mul, values, values)))
            expected = [(v / norm).hex() for v in values]
            assert [v.hex() for v in unit(values, "wxyz")] == expected
    with pytest.raises(InvalidTarget, match=r"wxyz must be non-zero, got \[0.0, -0.0, 0.0, 0.0\]"):
        unit([0.0, -0.0, 0.0, 0.0], "wxyz")
