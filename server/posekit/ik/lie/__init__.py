"""Lie groups SO(3) and SE(3) with the exp/log, plus/minus and Jacobian API."""

from posekit.ik.lie.base import MatrixLieGroup
from posekit.ik.lie.se3 import SE3
from posekit.ik.lie.so3 import SO3, RollPitchYaw
from posekit.ik.lie.utils import get_epsilon, skew

__all__ = ["SE3", "SO3", "MatrixLieGroup", "RollPitchYaw", "get_epsilon", "skew"]
