"""Robots: built-in models and MuJoCo Menagerie, their descriptions and default presets."""

from posekit.robots.description import RobotDescription, RobotSummary, describe_model
from posekit.robots.errors import RobotLoadError, RobotNotFound, RobotUnavailable
from posekit.robots.presets import default_limits, default_preset, end_effectors
from posekit.robots.registry import DEFAULT_ROBOT, RobotEntry, RobotRegistry

__all__ = [
    "DEFAULT_ROBOT",
    "RobotDescription",
    "RobotEntry",
    "RobotLoadError",
    "RobotNotFound",
    "RobotRegistry",
    "RobotSummary",
    "RobotUnavailable",
    "default_limits",
    "default_preset",
    "describe_model",
    "end_effectors",
]
