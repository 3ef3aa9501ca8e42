"""mink's import statements work with posekit's name: ``from mink.tasks import FrameTask``
becomes ``from posekit.tasks import FrameTask``, and each module is the engine's own."""

from __future__ import annotations

import subprocess
import sys

STATEMENTS = """
from posekit.configuration import Configuration
from posekit.constants import qpos_width
from posekit.exceptions import InvalidFrame, MinkError
from posekit.lie import SE3, SO3
from posekit.lie.se3 import SE3 as SE3_
from posekit.lie.so3 import SO3 as SO3_
from posekit.lie.base import MatrixLieGroup
from posekit.limits import ConfigurationLimit, VelocityLimit
from posekit.limits.collision_avoidance_limit import CollisionAvoidanceLimit
from posekit.limits.configuration_limit import ConfigurationLimit as ConfigurationLimit_
from posekit.limits.velocity_limit import VelocityLimit as VelocityLimit_
from posekit.solve_ik import build_ik, solve_ik
from posekit.tasks import FrameTask, PostureTask
from posekit.tasks.frame_task import FrameTask as FrameTask_
from posekit.tasks.posture_task import PostureTask as PostureTask_
from posekit.tasks.look_at_task import LookAtTask
from posekit.utils import get_body_body_ids
import posekit.tasks.com_task
import posekit
assert SE3 is SE3_ and SO3 is SO3_ and FrameTask is FrameTask_ and PostureTask is PostureTask_
assert ConfigurationLimit is ConfigurationLimit_ and VelocityLimit is VelocityLimit_
assert posekit.solve_ik is solve_ik and posekit.tasks.com_task.ComTask is posekit.ComTask
print("ok")
"""


def test_mink_style_import_statements_work_in_a_fresh_interpreter() -> None:
    result = subprocess.run(
        [sys.executable, "-c", STATEMENTS], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
