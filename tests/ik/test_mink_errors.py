"""Bad inputs raise what mink 1.3.0 raises: the same class, its builtin bases, mink's words.

Each case is written once against the mink API and run with both libraries. posekit's
error must be an instance of the class of mink's name (``posekit.InvalidFrame`` for
``mink.InvalidFrame``) and of every builtin class mink's error is (``KeyError``,
``ValueError``, ``AssertionError``…), so ``except`` clauses written for mink keep
working; and its message must start with mink's words: mink's message up to its first
sentence end or list of names (posekit may add detail and shortens long name lists).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

import mujoco
import numpy as np
import posekit
import pytest
from inline_models import TINY_XML
from support.models import builtin_model

ARM = builtin_model("arm7")
TINY = mujoco.MjModel.from_xml_string(TINY_XML)
TWO_FREE = mujoco.MjModel.from_xml_string(
    """<mujoco><worldbody>
    <body name="a"><freejoint name="a_root"/><geom size="0.1"/></body>
    <body name="b" pos="1 0 0"><freejoint name="b_root"/><geom size="0.1"/></body>
    </worldbody></mujoco>"""
)
EQUALITIES = mujoco.MjModel.from_xml_string(
    """<mujoco><compiler angle="radian"/><worldbody>
    <body><joint name="a" range="-1 1"/><geom size="0.1" mass="1"/></body>
    <body pos="1 0 0"><joint name="b" range="-1 1"/><geom size="0.1" mass="1"/></body>
    </worldbody><equality><joint name="couple" joint1="a" joint2="b"/>
    <joint name="off" joint1="b" joint2="a" active="false"/></equality></mujoco>"""
)

Case = Callable[[ModuleType], Any]


def _configuration(lib: ModuleType, model: mujoco.MjModel = ARM, q: Any = None) -> Any:
    configuration = lib.Configuration(model)
    if q is not None:
        configuration.update(np.asarray(q, dtype=float))
    return configuration


def _out_of_range(lib: ModuleType) -> None:
    q = ARM.key_qpos[0].copy()
    q[1] = 10.0
    _configuration(lib, ARM, q).check_limits()


def _ball_out_of_range(lib: ModuleType) -> None:
    q = TINY.qpos0.copy()
    q[7:11] = [np.cos(1.0), np.sin(1.0), 0.0, 0.0]  # 2 rad about x; the range is 1.5
    _configuration(lib, TINY, q).check_limits()


def _infeasible(lib: ModuleType) -> None:
    posture = lib.PostureTask(ARM, cost=1.0)
    posture.set_target(ARM.qpos0 + 1.0)
    limit = lib.VelocityLimit(ARM, {"joint1": 0.1})
    lib.solve_ik(_configuration(lib), [], 0.01, "daqp", limits=[limit], constraints=[posture])


def _kinetic_without_dt(lib: ModuleType) -> None:
    lib.KineticEnergyRegularizationTask(cost=1.0).compute_qp_objective(_configuration(lib))


def _no_target(task: Callable[[ModuleType], Any]) -> Case:
    return lambda lib: task(lib).compute_error(_configuration(lib))


CASES: dict[str, Case] = {
    # Configuration, frames, keyframes
    "unknown body": lambda lib: _configuration(lib).get_frame_jacobian("nope", "body"),
    "unknown site id": lambda lib: _configuration(lib).get_transform_frame_to_world(99, "site"),
    "unknown frame type": lambda lib: _configuration(lib).get_frame_jacobian("ee", "camera"),
    "unknown keyframe": lambda lib: _configuration(lib).update_from_keyframe("nope"),
    "joint out of range": _out_of_range,
    "ball joint out of range": _ball_out_of_range,
    # Task base
    "gain": lambda lib: lib.FrameTask("ee", "site", 1.0, 1.0, gain=1.5),
    "lm_damping": lambda lib: lib.ComTask(1.0, lm_damping=-1.0),
    # Frame tasks
    "frame position cost shape": lambda lib: lib.FrameTask("ee", "site", [1.0, 2.0], 1.0),
    "frame position cost sign": lambda lib: lib.FrameTask("ee", "site", -1.0, 1.0),
    "frame orientation cost shape": lambda lib: lib.FrameTask("ee", "site", 1.0, [1.0, 2.0]),
    "frame orientation cost sign": lambda lib: lib.FrameTask("ee", "site", 1.0, -1.0),
    "relative position cost shape": lambda lib: lib.RelativeFrameTask(
        "ee", "site", "base", "body", [1.0, 2.0], 1.0
    ),
    "relative position cost sign": lambda lib: lib.RelativeFrameTask(
        "ee", "site", "base", "body", -1.0, 1.0
    ),
    "frame no target": _no_target(lambda lib: lib.FrameTask("ee", "site", 1.0, 1.0)),
    "relative no target": _no_target(
        lambda lib: lib.RelativeFrameTask("ee", "site", "base", "body", 1.0, 1.0)
    ),
    # CoM, posture, damping
    "com cost shape": lambda lib: lib.ComTask(cost=[1.0, 2.0]),
    "com cost sign": lambda lib: lib.ComTask(cost=-1.0),
    "com target shape": lambda lib: lib.ComTask(cost=1.0).set_target(np.zeros(2)),
    "com no target": _no_target(lambda lib: lib.ComTask(cost=1.0)),
    "posture cost shape": lambda lib: lib.PostureTask(ARM, cost=np.ones(3)),
    "posture cost sign": lambda lib: lib.PostureTask(ARM, cost=-1.0),
    "posture target shape": lambda lib: lib.PostureTask(ARM, cost=1.0).set_target(np.zeros(6)),
    "posture no target": _no_target(lambda lib: lib.PostureTask(ARM, cost=1.0)),
    "damping cost sign": lambda lib: lib.DampingTask(ARM, cost=-1.0),
    # Look-at and axis-align
    "look-at axis shape": lambda lib: lib.LookAtTask("ee", "site", axis=np.ones(2)),
    "look-at axis zero": lambda lib: lib.LookAtTask("ee", "site", axis=np.zeros(3)),
    "look-at cost shape": lambda lib: lib.LookAtTask("ee", "site", cost=[1.0, 2.0]),
    "look-at cost sign": lambda lib: lib.LookAtTask("ee", "site", cost=-1.0),
    "look-at target shape": lambda lib: lib.LookAtTask("ee", "site").set_target(np.zeros(2)),
    "look-at no target": _no_target(lambda lib: lib.LookAtTask("ee", "site")),
    "axis-align axis shape": lambda lib: lib.AxisAlignTask("ee", "site", axis=np.ones(2)),
    "axis-align axis zero": lambda lib: lib.AxisAlignTask("ee", "site", axis=np.zeros(3)),
    "axis-align cost shape": lambda lib: lib.AxisAlignTask("ee", "site", cost=[1.0, 2.0]),
    "axis-align cost sign": lambda lib: lib.AxisAlignTask("ee", "site", cost=-1.0),
    "axis-align target shape": lambda lib: lib.AxisAlignTask("ee", "site").set_target(np.ones(2)),
    "axis-align target zero": lambda lib: lib.AxisAlignTask("ee", "site").set_target(np.zeros(3)),
    "axis-align no target": _no_target(lambda lib: lib.AxisAlignTask("ee", "site")),
    # DoF freezing, kinetic energy
    "freeze nothing": lambda lib: lib.DofFreezingTask(ARM, dof_indices=[]),
    "freeze out of range": lambda lib: lib.DofFreezingTask(ARM, dof_indices=[7]),
    "freeze twice": lambda lib: lib.DofFreezingTask(ARM, dof_indices=[1, 1]),
    "kinetic cost sign": lambda lib: lib.KineticEnergyRegularizationTask(cost=-1.0),
    "kinetic without dt": _kinetic_without_dt,
    # Equality constraints
    "no equality": lambda lib: lib.EqualityConstraintTask(ARM, cost=1.0),
    "equality cost shape": lambda lib: lib.EqualityConstraintTask(EQUALITIES, cost=[1.0] * 3),
    "equality cost sign": lambda lib: lib.EqualityConstraintTask(EQUALITIES, cost=-1.0),
    "equality name": lambda lib: lib.EqualityConstraintTask(EQUALITIES, 1.0, equalities=["x"]),
    "equality index": lambda lib: lib.EqualityConstraintTask(EQUALITIES, 1.0, equalities=[5]),
    "equality inactive": lambda lib: lib.EqualityConstraintTask(
        EQUALITIES, 1.0, equalities=["off"]
    ),
    "equality twice": lambda lib: lib.EqualityConstraintTask(EQUALITIES, 1.0, equalities=[0, 0]),
    # Limits
    "configuration gain": lambda lib: lib.ConfigurationLimit(ARM, gain=1.5),
    "ball margin": lambda lib: lib.ConfigurationLimit(TINY, min_distance_from_limits=1.6),
    "velocity unknown joint": lambda lib: lib.VelocityLimit(ARM, {"nope": 1.0}),
    "velocity free joint": lambda lib: lib.VelocityLimit(TINY, {"root": 1.0}),
    "velocity shape": lambda lib: lib.VelocityLimit(TINY, {"ball": [1.0, 2.0]}),
    "free joint no bound": lambda lib: lib.FreeJointVelocityLimit(TINY),
    "free joint shape": lambda lib: lib.FreeJointVelocityLimit(TINY, [1.0, 2.0]),
    "free joint not free": lambda lib: lib.FreeJointVelocityLimit(TINY, 1.0, joint_name="ball"),
    "free joint unknown": lambda lib: lib.FreeJointVelocityLimit(TINY, 1.0, joint_name="x"),
    "free joint none": lambda lib: lib.FreeJointVelocityLimit(ARM, 1.0),
    "free joint several": lambda lib: lib.FreeJointVelocityLimit(TWO_FREE, 1.0),
    "collision geom": lambda lib: lib.CollisionAvoidanceLimit(ARM, [(["nope"], ["floor"])]),
    "collision geom id": lambda lib: lib.CollisionAvoidanceLimit(ARM, [([999], ["floor"])]),
    # Utilities
    "vector unknown joint": lambda lib: lib.custom_configuration_vector(ARM, joint9=1.0),
    "vector shape": lambda lib: lib.custom_configuration_vector(ARM, joint1=[1.0, 2.0]),
    "vector keyframe": lambda lib: lib.custom_configuration_vector(ARM, key_name="nope"),
    "mocap unknown body": lambda lib: lib.move_mocap_to_frame(
        TINY, mujoco.MjData(TINY), "nope", "tip", "site"
    ),
    "mocap not mocap": lambda lib: lib.SE3.from_mocap_name(TINY, mujoco.MjData(TINY), "base"),
    # Lie groups
    "skew shape": lambda lib: lib.lie.skew(np.zeros(5)),
    "SO3 shape": lambda lib: lib.SO3(np.zeros(3)),
    "SE3 shape": lambda lib: lib.SE3(np.zeros(6)),
    "SO3 matrix shape": lambda lib: lib.SO3.from_matrix(np.eye(4)),
    "SE3 matrix shape": lambda lib: lib.SE3.from_matrix(np.eye(3)),
    "SE3 translation shape": lambda lib: lib.SE3.from_rotation_and_translation(
        lib.SO3.identity(), np.zeros(2)
    ),
    "SE3 tangent shape": lambda lib: lib.SE3.exp(np.zeros(5)),
    "SO3 point shape": lambda lib: lib.SO3.identity().apply(np.zeros(2)),
    "SE3 point shape": lambda lib: lib.SE3.identity().apply(np.zeros(2)),
    "interpolate alpha": lambda lib: lib.SO3.identity().interpolate(lib.SO3.identity(), 1.5),
    # Solving
    "infeasible": _infeasible,
}

# mink's words are not kept where its message misspells or misnames the thing.
OWN_WORDS = {
    "SO3 shape": "mink says 'Expeced wxyz to be a length 4 vector'",
    "SE3 shape": "mink says 'Expeced wxyz_xyz to be a length 7 vector'",
    "frame orientation cost sign": "mink says 'FrameTask position cost should be >= 0'",
}
# The thing mink raises for (a ``KeyError`` from MuJoCo's ``model.joint(name)`` …) has no
# words of mink's; the class is matched, posekit's message names the joint or body.
NOT_MINKS_WORDS = {
    "velocity unknown joint",
    "free joint unknown",
    "vector unknown joint",
    "mocap unknown body",
    "skew shape",
    "SO3 matrix shape",
    "SE3 matrix shape",
    "SE3 translation shape",
    "SE3 tangent shape",
    "SO3 point shape",
    "SE3 point shape",
}


def minks_words(message: str) -> str:
    """mink's message up to its first list of names or the end of its first sentence."""
    message = message.split("[", 1)[0]
    end = re.search(r"\.(?=\s|[A-Z]|$)", message)
    return message[: end.end()] if end else message


def _raised(case: Case, lib: ModuleType) -> BaseException:
    try:
        case(lib)
    except Exception as error:  # what each library raises is the thing under test
        return error
    raise AssertionError(f"{lib.__name__} raised nothing")


@pytest.mark.parametrize("name", list(CASES))
def test_errors_match_minks(name: str, mink: ModuleType) -> None:
    reference = _raised(CASES[name], mink)
    ours = _raised(CASES[name], posekit)
    if type(reference).__module__.startswith("mink"):
        assert isinstance(ours, getattr(posekit, type(reference).__name__)), (reference, ours)
    for base in type(reference).__mro__:
        if base.__module__ == "builtins" and base is not object:
            assert isinstance(ours, base), (base, reference, ours)
    if name in OWN_WORDS or name in NOT_MINKS_WORDS:
        return
    assert str(ours).startswith(minks_words(str(reference))), (str(reference), str(ours))


def test_the_word_rule_is_not_vacuous() -> None:
    """mink's words are a real prefix: up to a sentence end or a list, never empty."""
    assert minks_words("Keyframe x does not exist in the model. Available: ['a']") == (
        "Keyframe x does not exist in the model."
    )
    assert minks_words("Duplicate DOF indices found: [1, 1].") == "Duplicate DOF indices found: "
    assert minks_words("joint 1.5 <= 2.0 <= 3.0") == "joint 1.5 <= 2.0 <= 3.0"
    assert minks_words("camera is not supported.Supported frame types are: (") == (
        "camera is not supported."
    )
