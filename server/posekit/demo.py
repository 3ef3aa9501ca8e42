"""A terminal demo: drive the built-in arm's end effector 10 cm and print the convergence."""

from __future__ import annotations

import importlib.resources

import mujoco
import numpy as np

import posekit


def builtin_model(name: str) -> mujoco.MjModel:
    """A built-in model shipped in the ``posekit.models`` package (``arm7``, ``humanoid``)."""
    path = importlib.resources.files("posekit.models") / f"{name}.xml"
    with importlib.resources.as_file(path) as file:
        return mujoco.MjModel.from_xml_path(str(file))


def run_demo(steps: int = 20, dt: float = 0.01) -> list[float]:
    """Solve IK toward a target 10 cm from ``arm7``'s home pose; returns the error norms [m]."""
    model = builtin_model("arm7")
    configuration = posekit.Configuration(model)
    configuration.update_from_keyframe("home")
    ee = posekit.FrameTask("ee", "site", position_cost=1.0, orientation_cost=1.0)
    start = configuration.get_transform_frame_to_world("ee", "site")
    ee.set_target(posekit.SE3.from_translation(np.array([0.0, 0.1, 0.0])) @ start)
    posture = posekit.PostureTask(model, cost=1e-3)
    posture.set_target_from_configuration(configuration)
    limits = [posekit.ConfigurationLimit(model)]
    errors = []
    for _ in range(steps):
        velocity = posekit.solve_ik(
            configuration, [ee, posture], dt, "daqp", damping=1e-6, limits=limits
        )
        configuration.integrate_inplace(velocity, dt)
        errors.append(float(np.linalg.norm(ee.compute_error(configuration)[:3])))
    return errors


def main() -> None:
    """Print the position error of each step of :func:`run_demo`."""
    print("arm7: moving the end effector 10 cm sideways (frame task + posture, daqp)")
    for step, error in enumerate(run_demo(), start=1):
        print(f"step {step:2d}: position error {error * 1000:8.3f} mm")
