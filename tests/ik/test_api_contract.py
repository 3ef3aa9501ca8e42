"""The public API is upstream's (mink 1.3.0): names, signatures, defaults, attributes.

``import posekit as mink`` must work for code written against the reference API
(DESIGN §3, the seed docs). These tests pin that surface without importing mink.
"""

from __future__ import annotations

import inspect

import numpy as np
import posekit
import posekit as mink
import pytest
from support.models import builtin_model

ARM = builtin_model("arm7")
HUMANOID = builtin_model("humanoid")
REQUIRED = inspect.Parameter.empty

# name -> [(parameter, default or REQUIRED), ...], without ``self``.
SIGNATURES: dict[str, list[tuple[str, object]]] = {
    "Configuration": [("model", REQUIRED), ("q", None)],
    "FrameTask": [
        ("frame_name", REQUIRED), ("frame_type", REQUIRED), ("position_cost", REQUIRED),
        ("orientation_cost", REQUIRED), ("gain", 1.0), ("lm_damping", 0.0),
    ],
    "RelativeFrameTask": [
        ("frame_name", REQUIRED), ("frame_type", REQUIRED), ("root_name", REQUIRED),
        ("root_type", REQUIRED), ("position_cost", REQUIRED), ("orientation_cost", REQUIRED),
        ("gain", 1.0), ("lm_damping", 0.0),
    ],
    "ComTask": [("cost", REQUIRED), ("gain", 1.0), ("lm_damping", 0.0)],
    "LookAtTask": [
        ("frame_name", REQUIRED), ("frame_type", REQUIRED), ("axis", (0.0, 0.0, 1.0)),
        ("cost", 1.0), ("gain", 1.0), ("lm_damping", 0.0),
    ],
    "AxisAlignTask": [
        ("frame_name", REQUIRED), ("frame_type", REQUIRED), ("axis", (0.0, 0.0, 1.0)),
        ("cost", 1.0), ("gain", 1.0), ("lm_damping", 0.0),
    ],
    "EqualityConstraintTask": [
        ("model", REQUIRED), ("cost", REQUIRED), ("equalities", None), ("gain", 1.0),
        ("lm_damping", 0.0),
    ],
    "DofFreezingTask": [("model", REQUIRED), ("dof_indices", REQUIRED), ("gain", 1.0)],
    "PostureTask": [("model", REQUIRED), ("cost", REQUIRED), ("gain", 1.0), ("lm_damping", 0.0)],
    "DampingTask": [("model", REQUIRED), ("cost", REQUIRED)],
    "KineticEnergyRegularizationTask": [("cost", REQUIRED)],
    "Task": [("cost", REQUIRED), ("gain", 1.0), ("lm_damping", 0.0)],
    "ConfigurationLimit": [("model", REQUIRED), ("gain", 0.95), ("min_distance_from_limits", 0.0)],
    "VelocityLimit": [("model", REQUIRED), ("velocities", {})],
    "FreeJointVelocityLimit": [
        ("model", REQUIRED), ("max_linear_velocity", None), ("max_angular_velocity", None),
        ("joint_name", None),
    ],
    "CollisionAvoidanceLimit": [
        ("model", REQUIRED), ("geom_pairs", REQUIRED), ("gain", 0.85),
        ("minimum_distance_from_collisions", 0.005), ("collision_detection_distance", 0.01),
        ("bound_relaxation", 0.0), ("broadphase", True),
    ],
    "build_ik": [
        ("configuration", REQUIRED), ("tasks", REQUIRED), ("dt", REQUIRED), ("damping", 1e-12),
        ("limits", None), ("constraints", None),
    ],
    "solve_ik": [
        ("configuration", REQUIRED), ("tasks", REQUIRED), ("dt", REQUIRED), ("solver", REQUIRED),
        ("damping", 1e-12), ("safety_break", False), ("limits", None), ("constraints", None),
        ("kwargs", REQUIRED),
    ],
    "Configuration.update": [("q", None)],
    "Configuration.update_from_keyframe": [("key_name", REQUIRED)],
    "Configuration.check_limits": [("tol", 1e-6), ("safety_break", True)],
    # frame_type defaults to "body" for Pink's one-argument calls (mink always passes it).
    "Configuration.get_frame_jacobian": [("frame_name", REQUIRED), ("frame_type", "body")],
    "Configuration.get_transform_frame_to_world": [
        ("frame_name", REQUIRED), ("frame_type", "body"),
    ],
    "Configuration.get_transform": [
        ("source_name", REQUIRED), ("source_type", REQUIRED), ("dest_name", REQUIRED),
        ("dest_type", REQUIRED),
    ],
    "Configuration.integrate": [("velocity", REQUIRED), ("dt", REQUIRED)],
    "Configuration.integrate_inplace": [("velocity", REQUIRED), ("dt", REQUIRED)],
    "move_mocap_to_frame": [
        ("model", REQUIRED), ("data", REQUIRED), ("mocap_name", REQUIRED),
        ("frame_name", REQUIRED), ("frame_type", REQUIRED),
    ],
    "custom_configuration_vector": [("model", REQUIRED), ("key_name", None), ("kwargs", REQUIRED)],
    "SE3.from_mocap_name": [("model", REQUIRED), ("data", REQUIRED), ("mocap_name", REQUIRED)],
    "SE3.from_mocap_id": [("data", REQUIRED), ("mocap_id", REQUIRED)],
    "SO3.from_rpy_radians": [("roll", REQUIRED), ("pitch", REQUIRED), ("yaw", REQUIRED)],
}  # fmt: skip


def _resolve(dotted: str) -> object:
    owner: object = mink
    for part in dotted.split("."):
        owner = getattr(owner, part)
    return owner


@pytest.mark.parametrize("name", list(SIGNATURES))
def test_signatures_and_defaults(name: str) -> None:
    target = _resolve(name)
    function = target.__init__ if inspect.isclass(target) else target
    parameters = [
        (p.name, p.default)
        for p in inspect.signature(function).parameters.values()
        if p.name not in ("self", "cls")
    ]
    assert parameters == SIGNATURES[name]


def test_public_names() -> None:
    names = """
        Configuration SO3 SE3 MatrixLieGroup Objective BaseTask Task FrameTask
        RelativeFrameTask ComTask LookAtTask AxisAlignTask EqualityConstraintTask
        DofFreezingTask PostureTask DampingTask KineticEnergyRegularizationTask Constraint
        Limit ConfigurationLimit VelocityLimit FreeJointVelocityLimit CollisionAvoidanceLimit
        build_ik solve_ik move_mocap_to_frame custom_configuration_vector get_freejoint_dims
        get_body_body_ids get_body_geom_ids get_body_joint_ids get_subtree_body_ids
        get_subtree_geom_ids get_subtree_joint_ids SUPPORTED_FRAMES FRAME_TO_ENUM
        FRAME_TO_JAC_FUNC FRAME_TO_POS_ATTR FRAME_TO_XMAT_ATTR MinkError
    """.split()
    missing = [name for name in names if not hasattr(mink, name)]
    assert not missing
    assert set(posekit.__all__) <= set(dir(posekit))
    assert mink.SUPPORTED_FRAMES == ("body", "geom", "site")


def test_upstream_module_names() -> None:
    assert mink.lie.SE3 is mink.SE3 and mink.lie.MatrixLieGroup is mink.MatrixLieGroup
    assert mink.tasks.FrameTask is mink.FrameTask and mink.tasks.Objective is mink.Objective
    assert mink.limits.CollisionAvoidanceLimit is mink.CollisionAvoidanceLimit
    assert mink.utils.get_body_body_ids is mink.get_body_body_ids
    assert mink.exceptions.MinkError is mink.MinkError
    assert mink.configuration.Configuration is mink.Configuration


def test_class_hierarchy() -> None:
    residual_tasks = [
        mink.FrameTask, mink.RelativeFrameTask, mink.ComTask, mink.LookAtTask,
        mink.AxisAlignTask, mink.EqualityConstraintTask, mink.DofFreezingTask,
        mink.PostureTask, mink.DampingTask,
    ]  # fmt: skip
    for cls in residual_tasks:
        assert issubclass(cls, mink.Task) and issubclass(cls, mink.BaseTask), cls
    assert issubclass(mink.DampingTask, mink.PostureTask)
    assert issubclass(mink.KineticEnergyRegularizationTask, mink.BaseTask)
    assert not issubclass(mink.KineticEnergyRegularizationTask, mink.Task)
    for cls in (
        mink.ConfigurationLimit, mink.VelocityLimit, mink.FreeJointVelocityLimit,
        mink.CollisionAvoidanceLimit,
    ):  # fmt: skip
        assert issubclass(cls, mink.Limit), cls
    assert issubclass(mink.SO3, mink.MatrixLieGroup) and issubclass(mink.SE3, mink.MatrixLieGroup)
    assert mink.Objective._fields == ("H", "c")
    assert mink.Constraint._fields == ("G", "h")
    assert mink.Constraint().inactive and not mink.Constraint(np.eye(1), np.ones(1)).inactive


def test_task_attributes_and_setters() -> None:
    configuration = mink.Configuration(ARM)
    configuration.update_from_keyframe("home")

    frame = mink.FrameTask("ee", "site", position_cost=[1.0, 2.0, 3.0], orientation_cost=0.5)
    assert (frame.frame_name, frame.frame_type) == ("ee", "site")
    assert frame.position_cost == [1.0, 2.0, 3.0] and frame.orientation_cost == 0.5
    assert frame.transform_target_to_world is None
    frame.set_position_cost(2.0)
    frame.set_orientation_cost([0.1, 0.2, 0.3])
    assert frame.position_cost == 2.0
    np.testing.assert_array_equal(frame.cost, [2.0, 2.0, 2.0, 0.1, 0.2, 0.3])
    frame.set_target_from_configuration(configuration)
    assert isinstance(frame.transform_target_to_world, mink.SE3)
    assert (frame.k, frame.gain, frame.lm_damping) == (6, 1.0, 0.0)

    relative = mink.RelativeFrameTask("ee", "site", "base", "body", 1.0, [0.1, 0.2, 0.3])
    assert (relative.root_name, relative.root_type) == ("base", "body")
    assert relative.position_cost == 1.0 and relative.orientation_cost == [0.1, 0.2, 0.3]
    assert relative.transform_target_to_root is None
    relative.set_target_from_configuration(configuration)
    assert isinstance(relative.transform_target_to_root, mink.SE3)

    com = mink.ComTask(cost=[1.0, 2.0, 3.0])
    assert com.target_com is None and com.k == 3
    com.set_cost(4.0)
    np.testing.assert_array_equal(com.cost, [4.0, 4.0, 4.0])
    com.set_target_from_configuration(configuration)
    np.testing.assert_array_equal(com.target_com, configuration.data.subtree_com[1])

    for cls, target in ((mink.LookAtTask, "target_pos"), (mink.AxisAlignTask, "target_dir")):
        task = cls("ee", "site", axis=(0.0, 0.0, 2.0), cost=3.0)
        np.testing.assert_array_equal(task.axis, [0.0, 0.0, 1.0])  # normalised
        np.testing.assert_array_equal(task.cost, [3.0, 3.0, 3.0])
        assert getattr(task, target) is None
        task.set_axis([2.0, 0.0, 0.0])
        np.testing.assert_array_equal(task.axis, [1.0, 0.0, 0.0])
        task.set_cost([0.5])
        np.testing.assert_array_equal(task.cost, [0.5, 0.5, 0.5])
        task.set_target_from_configuration(configuration)
        np.testing.assert_allclose(task.compute_error(configuration), 0.0, atol=1e-12)

    posture = mink.PostureTask(HUMANOID, cost=1.0)
    assert (posture.nq, posture.k, posture.target_q) == (HUMANOID.nq, HUMANOID.nv, None)
    damping = mink.DampingTask(HUMANOID, cost=0.5)
    assert (damping.nq, damping.gain, damping.lm_damping) == (HUMANOID.nq, 0.0, 0.0)
    damping.set_target(HUMANOID.qpos0)  # inherited from PostureTask; changes nothing
    assert np.all(damping.compute_error(mink.Configuration(HUMANOID)) == 0.0)
    np.testing.assert_array_equal(damping.cost, 0.5)  # the cost as given, as upstream …
    H = damping.compute_qp_objective(mink.Configuration(HUMANOID)).H
    np.testing.assert_array_equal(np.diag(H)[:6], 0.0)  # … but the floating base is not damped
    np.testing.assert_allclose(np.diag(H)[6:], 0.25)

    freeze = mink.DofFreezingTask(ARM, dof_indices=[0, 3])
    assert (freeze.dof_indices, freeze.nv, freeze.k) == ([0, 3], ARM.nv, 2)

    kinetic = mink.KineticEnergyRegularizationTask(cost=1e-4)
    assert kinetic.inv_dt_sq is None
    kinetic.set_dt(0.02)
    assert kinetic.inv_dt_sq == pytest.approx(2500.0)


def test_limit_attributes() -> None:
    limit = mink.ConfigurationLimit(ARM, gain=0.5)
    assert limit.model is ARM and limit.gain == 0.5
    np.testing.assert_array_equal(limit.indices, np.arange(ARM.nv))
    np.testing.assert_array_equal(limit.lower, ARM.jnt_range[:, 0])  # one per qpos coordinate
    np.testing.assert_array_equal(limit.upper, ARM.jnt_range[:, 1])
    assert limit.projection_matrix.shape == (ARM.nv, ARM.nv)
    velocity = mink.VelocityLimit(ARM, {"joint2": 1.5})
    np.testing.assert_array_equal(velocity.indices, [1])
    np.testing.assert_array_equal(velocity.limit, [1.5])
    np.testing.assert_array_equal(velocity.projection_matrix, np.eye(ARM.nv)[[1]])
    assert mink.VelocityLimit(ARM).compute_qp_inequalities(mink.Configuration(ARM), 0.1).inactive
