"""Objects of every public class of the mink API, built the same way with mink or posekit.

``bench/mink_api_diff.py`` compares their public attributes (``shape_of``: ``None``,
array shape and dtype kind, scalar type) to find attribute shapes posekit lacks.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import mujoco
import numpy as np

PROBE_XML = """
<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="target" mocap="true" pos="0.5 0 1"><geom type="sphere" size="0.02" contype="0" conaffinity="0"/></body>
    <body name="base" pos="0 0 1"><freejoint name="root"/>
      <geom name="torso" type="box" size="0.1 0.1 0.05" mass="2"/>
      <body name="upper" pos="0.1 0 0"><joint name="shoulder" type="ball" range="0 1.2"/>
        <geom name="upper" type="capsule" fromto="0 0 0 0.2 0 0" size="0.02"/>
        <body name="lower" pos="0.2 0 0"><joint name="elbow" axis="0 1 0" range="-2 2"/>
          <joint name="slide" type="slide" axis="1 0 0" range="-0.1 0.1"/>
          <geom name="lower" type="capsule" fromto="0 0 0 0.2 0 0" size="0.02"/>
          <site name="tip" pos="0.2 0 0"/>
        </body>
      </body>
      <body name="other" pos="-0.1 0 0"><joint name="spin" axis="0 0 1"/>
        <geom name="other" type="capsule" fromto="0 0 0 -0.2 0 0" size="0.02"/>
      </body>
    </body>
  </worldbody>
  <equality>
    <joint name="couple" joint1="spin" joint2="elbow"/>
    <connect name="pin" body1="other" body2="upper" anchor="-0.2 0 0"/>
  </equality>
  <keyframe><key name="home" qpos="0 0 1 1 0 0 0  0.9 0.3 0.3 0.1  0.5 0.05 0.2"/></keyframe>
</mujoco>
"""


BARE_XML = """
<mujoco><worldbody><body><joint name="free_spin"/><geom size="0.1"/></body></worldbody></mujoco>
"""


def probes(lib: ModuleType, model: mujoco.MjModel) -> dict[str, object]:
    """Objects of every public class, built the same way with either library."""
    bare = mujoco.MjModel.from_xml_string(BARE_XML)
    configuration = lib.Configuration(model)
    configuration.update_from_keyframe("home")

    def targeted(task: Any) -> Any:
        task.set_target_from_configuration(configuration)
        return task

    kinetic = lib.KineticEnergyRegularizationTask(cost=1e-3)
    kinetic.set_dt(0.01)
    look_at = lib.LookAtTask("tip", "site", axis=(0.0, 0.0, 1.0))
    look_at.set_target(np.array([1.0, 0.0, 1.0]))
    align = lib.AxisAlignTask("tip", "site", axis=(0.0, 0.0, 1.0))
    align.set_target(np.array([0.0, 0.0, 1.0]))
    com = lib.ComTask(cost=1.0)
    com.set_target(np.array([0.0, 0.0, 1.0]))
    return {
        "Configuration": configuration,
        "FrameTask (no target)": lib.FrameTask("tip", "site", 1.0, 0.5),
        "FrameTask": targeted(lib.FrameTask("tip", "site", [1.0, 2.0, 3.0], 0.5)),
        "RelativeFrameTask": targeted(
            lib.RelativeFrameTask("tip", "site", "base", "body", 1.0, 1.0)
        ),
        "ComTask": com,
        "LookAtTask": look_at,
        "AxisAlignTask": align,
        "PostureTask": targeted(lib.PostureTask(model, cost=1.0)),
        "DampingTask": lib.DampingTask(model, cost=0.5),
        "DofFreezingTask": lib.DofFreezingTask(model, dof_indices=[6, 9]),
        "EqualityConstraintTask": lib.EqualityConstraintTask(model, cost=[1.0, 2.0]),
        "EqualityConstraintTask (named)": lib.EqualityConstraintTask(
            model, cost=1.0, equalities=["pin"]
        ),
        "KineticEnergyRegularizationTask": kinetic,
        "ConfigurationLimit": lib.ConfigurationLimit(model),
        "ConfigurationLimit (nothing limited)": lib.ConfigurationLimit(bare),
        "VelocityLimit": lib.VelocityLimit(model, {"elbow": 1.0, "shoulder": [1.0, 2.0, 3.0]}),
        "VelocityLimit (empty)": lib.VelocityLimit(model),
        "FreeJointVelocityLimit": lib.FreeJointVelocityLimit(model, 1.0, [1.0, 2.0, 3.0]),
        "CollisionAvoidanceLimit": lib.CollisionAvoidanceLimit(
            model, [(["lower", "other"], ["floor"])]
        ),
        "SO3": lib.SO3.from_rpy_radians(0.1, 0.2, 0.3),
        "SE3": lib.SE3.from_rotation_and_translation(
            lib.SO3.from_rpy_radians(0.1, 0.2, 0.3), np.array([1.0, 2.0, 3.0])
        ),
    }


def shape_of(value: object) -> str:
    """A comparable description: ``None``, ``ndarray(shape, kind)``, a type name or length."""
    if value is None:
        return "None"
    if isinstance(value, np.ndarray) and value.size == 0:
        return f"ndarray{value.shape}"
    if isinstance(value, np.ndarray):
        kind = "f" if value.dtype.kind == "f" else "int" if value.dtype.kind in "iu" else "other"
        return f"ndarray{value.shape} {kind}"
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return "number"
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__}[{len(value)}]"
    return type(value).__name__
