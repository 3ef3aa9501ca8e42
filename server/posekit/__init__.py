"""posekit: interactive, task-based differential inverse kinematics for MuJoCo robots.

The IK engine's public API is re-exported here (``from posekit import FrameTask,
solve_ik``); it follows mink 1.3.0, so ``import posekit as mink`` works.
"""

from posekit.ik import *  # noqa: F403
from posekit.ik import __all__ as _engine_names

__all__ = list(_engine_names)
__version__ = "0.1.0"
