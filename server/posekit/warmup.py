"""Compile (or load from the on-disk cache) every compiled kernel of the engine.

The engine's Numba kernels are compiled the first time each is called, and cached in
``__pycache__``; loading a cached one still costs a fraction of a second per kernel in a
new process. :func:`compile_kernels` solves one step of a stack that uses every kernel
kind (frame, relative frame, look-at, axis-align, CoM, posture; collision avoidance with
its broadphase), a session's whole step (``Plan.advance``), the compiled error norms of
its tasks, and every task's error and
Jacobian on their own, on the built-in arm, so that a process that calls it first — the
Docker build, the test suite — never pays that cost
while it serves a session.

    python -m posekit.warmup
"""

from __future__ import annotations

import time

import numpy as np

import posekit
from posekit.demo import builtin_model
from posekit.ik.compiled.engine import error_norms, plan_for
from posekit.ik.compiled.selection import ENGINES, using_engine


def compile_kernels(steps: int = 2) -> float:
    """Solve ``steps`` steps of a stack using every kernel kind on the built-in arm with
    each engine (compiled and Python), and evaluate each task's error norms (compiled)
    and error and Jacobian; seconds it took."""
    start = time.perf_counter()
    model = builtin_model("arm7")
    configuration = posekit.Configuration(model)
    configuration.update_from_keyframe("home")
    at_current: list[posekit.FrameTask | posekit.RelativeFrameTask | posekit.ComTask] = [
        posekit.FrameTask("ee", "site", position_cost=1.0, orientation_cost=1.0),
        posekit.RelativeFrameTask("ee", "site", "link2", "body", 1.0, 1.0),
        posekit.ComTask(cost=0.1),
    ]
    for task in at_current:
        task.set_target_from_configuration(configuration)
    posture = posekit.PostureTask(model, cost=1e-3)
    posture.set_target_from_configuration(configuration)
    look_at = posekit.LookAtTask("wrist_cam", "site", cost=0.1)
    look_at.set_target(np.array([0.7, 0.3, 0.0]))
    axis_align = posekit.AxisAlignTask("ee", "site", cost=0.1)
    axis_align.set_target(np.array([0.0, 0.0, -1.0]))
    tasks: list[posekit.Task] = [*at_current, posture, look_at, axis_align]
    bodies = [model.body(b).name for b in range(1, model.nbody)]
    limits: list[posekit.Limit] = [
        posekit.ConfigurationLimit(model),
        posekit.CollisionAvoidanceLimit(
            model,
            [(bodies, bodies)],
            collision_detection_distance=1.0,  # broadphase too
        ),
    ]
    for engine in ENGINES:  # the compiled step, and the reference path's kernels
        with using_engine(engine):
            for _ in range(steps):
                velocity = posekit.solve_ik(configuration, tasks, 0.01, "daqp", limits=limits)
                configuration.integrate_inplace(velocity, 0.01)
                error_norms(configuration, tasks, 0.01, limits=limits)  # compiled only
                plan_for(configuration, tasks, 0.01, limits=limits).advance(0.0)  # a session's step
                for each in tasks:  # sessions report every task's error norm
                    each.compute_error(configuration)
                    each.compute_jacobian(configuration)
    return time.perf_counter() - start


if __name__ == "__main__":
    print(f"posekit: engine kernels ready in {compile_kernels():.2f} s")
