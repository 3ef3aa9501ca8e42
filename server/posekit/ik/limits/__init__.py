"""IK limits: inequalities every step must satisfy."""

from posekit.ik.limits.collision_avoidance_limit import CollisionAvoidanceLimit
from posekit.ik.limits.configuration_limit import ConfigurationLimit
from posekit.ik.limits.free_joint_velocity_limit import FreeJointVelocityLimit
from posekit.ik.limits.limit import Bounds, Constraint, Limit
from posekit.ik.limits.velocity_limit import VelocityLimit

__all__ = [
    "Bounds",
    "CollisionAvoidanceLimit",
    "ConfigurationLimit",
    "Constraint",
    "FreeJointVelocityLimit",
    "Limit",
    "VelocityLimit",
]
