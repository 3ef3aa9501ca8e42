"""The built-in arm reaching for a point near its tool: a small IK problem (a frame task
and a posture task under configuration and velocity limits) for the compiled-path tests."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import posekit

from support.models import builtin_model

ARM = builtin_model("arm7")

Problem = tuple[posekit.Configuration, list[posekit.Task], list[posekit.Limit]]


def arm_problem(offset: Sequence[float]) -> Problem:
    """arm7 at its ``home`` keyframe, its ``ee`` site asked to move by ``offset`` [m]
    (world frame), a light posture task, configuration and velocity limits."""
    configuration = posekit.Configuration(ARM)
    configuration.update_from_keyframe("home")
    hand = posekit.FrameTask("ee", "site", 1.0, 1.0, lm_damping=1e-6)
    hand.set_target(
        posekit.SE3.from_translation(np.array(offset, dtype=float))
        @ configuration.get_transform_frame_to_world("ee", "site")
    )
    posture = posekit.PostureTask(ARM, 1e-2)
    posture.set_target_from_configuration(configuration)
    limits = [posekit.ConfigurationLimit(ARM), posekit.VelocityLimit(ARM, {"joint1": 2.0})]
    return configuration, [hand, posture], limits
