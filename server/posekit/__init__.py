"""posekit: interactive, task-based differential inverse kinematics for MuJoCo robots.

The IK engine's public API is re-exported here (``from posekit import FrameTask,
solve_ik``); it follows mink 1.3.0, so ``import posekit as mink`` works.
"""

import sys

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

# ... and as modules, so that mink's import statements work too: ``from posekit.tasks
# import FrameTask``, ``from posekit.lie.se3 import SE3``, ``from posekit.solve_ik import
# solve_ik``. Each name is the engine's module itself (registered under both names).
_MINK_MODULES = ("configuration", "constants", "exceptions", "lie", "limits", "tasks", "utils")
for _name in [*sys.modules]:
    if _name.startswith("posekit.ik.") and _name.split(".")[2] in _MINK_MODULES:
        sys.modules.setdefault("posekit." + _name.removeprefix("posekit.ik."), sys.modules[_name])
sys.modules.setdefault("posekit.solve_ik", sys.modules["posekit.ik.solve"])

__all__ = list(_engine_names)
__version__ = "0.1.0"
