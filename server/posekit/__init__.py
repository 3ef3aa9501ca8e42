"""posekit: interactive, task-based differential inverse kinematics for MuJoCo robots.

The IK engine's public API is re-exported here (``from posekit import FrameTask,
solve_ik``); it follows mink 1.3.0, so ``import posekit as mink`` works.
"""

from posekit.ik import *  # noqa: F403
from posekit.ik import __all__ as _engine_names

# The engine's modules under upstream's names, so that ``mink.lie.SE3``,
# ``mink.utils.get_body_body_ids`` or ``mink.constants.qpos_width`` keep working
# after ``import posekit as mink``.
from posekit.ik import configuration as configuration
from posekit.ik import constants as constants
from posekit.ik import exceptions as exceptions
from posekit.ik import lie as lie
from posekit.ik import limits as limits
from posekit.ik import tasks as tasks
from posekit.ik import utils as utils

__all__ = list(_engine_names)
__version__ = "0.1.0"
