"""What one IK step of a model's default preset costs, measured before it is admitted.

A session's step runs on the server's event loop: while it runs, no other session is
stepped or answered. So an upload whose step is slow (a 6,000-DoF model stepped in 14 s)
is refused at admission (``POSEKIT_MAX_STEP_MS``), and this is the figure it is judged
by: the engine's step — kinematics, every task's error and Jacobian, the QP — on the
tasks and limits a new session on the model gets (:mod:`posekit.robots.presets`), from
its home keyframe, with targets displaced so that the step has work to do.
"""

from __future__ import annotations

import math
import statistics
import time
from typing import Any

import mujoco
import numpy as np

import posekit as engine
from posekit.robots.naming import default_keyframe
from posekit.robots.presets import default_preset

DT = 1.0 / 60.0  # [s] a session's default step
OFFSET = 0.03  # [m] each frame target is moved this far from where the frame is
WARM_UP_MS = 5000.0  # [ms] the first step may take this much longer (compiled kernels load)


def _tasks(model: mujoco.MjModel, configuration: engine.Configuration) -> list[Any]:
    """The default preset as engine tasks, targets set ``OFFSET`` from the frames."""
    tasks: list[Any] = []
    for spec in default_preset(model):
        params = spec["params"]
        task: Any
        if spec["type"] == "frame":
            task = engine.FrameTask(
                params["frame"],
                params["frame_type"],
                position_cost=params["position_cost"],
                orientation_cost=params["orientation_cost"],
                lm_damping=params.get("lm_damping", 0.0),
            )
            pose = configuration.get_transform_frame_to_world(params["frame"], params["frame_type"])
            task.set_target(engine.SE3.from_translation(np.full(3, OFFSET)) @ pose)
        elif spec["type"] == "com":
            task = engine.ComTask(params["cost"])
            task.set_target_from_configuration(configuration)
        else:
            task = engine.PostureTask(model, params["cost"])
            task.set_target_from_configuration(configuration)
        tasks.append(task)
    return tasks


def step_ms(model: mujoco.MjModel, steps: int = 5, give_up_ms: float = math.inf) -> float:
    """The median CPU time [ms] of ``steps`` IK steps of the default preset (after one
    that warms caches and loads the compiled kernels), each integrated, as a session
    would; the time of the first step over ``give_up_ms`` (the warm-up step: over
    ``give_up_ms + WARM_UP_MS``), if one is (a model far over budget is not timed long)."""
    configuration = engine.Configuration(model)
    keyframe = default_keyframe(model)
    if keyframe is not None:
        configuration.update_from_keyframe(keyframe)
    tasks = _tasks(model, configuration)
    limits = [engine.ConfigurationLimit(model)]
    times = []
    for _ in range(steps + 1):
        start = time.thread_time()
        velocity = engine.solve_ik(configuration, tasks, DT, "daqp", 1e-3, limits=limits)
        configuration.integrate_inplace(velocity, DT)
        times.append(time.thread_time() - start)
        if times[-1] > (give_up_ms + (WARM_UP_MS if len(times) == 1 else 0.0)) / 1e3:
            return 1e3 * times[-1]
    return 1e3 * statistics.median(times[1:])
