"""IK tasks: what the robot should do, as weighted least-squares objectives."""

from posekit.ik.tasks.axis_align_task import AxisAlignTask
from posekit.ik.tasks.com_task import ComTask
from posekit.ik.tasks.damping_task import DampingTask
from posekit.ik.tasks.dof_freezing_task import DofFreezingTask
from posekit.ik.tasks.equality_constraint_task import EqualityConstraintTask
from posekit.ik.tasks.frame_task import FrameTask
from posekit.ik.tasks.kinetic_energy_regularization_task import KineticEnergyRegularizationTask
from posekit.ik.tasks.look_at_task import LookAtTask
from posekit.ik.tasks.posture_task import PostureTask
from posekit.ik.tasks.relative_frame_task import RelativeFrameTask
from posekit.ik.tasks.task import BaseTask, Objective, Task

__all__ = [
    "AxisAlignTask",
    "BaseTask",
    "ComTask",
    "DampingTask",
    "DofFreezingTask",
    "EqualityConstraintTask",
    "FrameTask",
    "KineticEnergyRegularizationTask",
    "LookAtTask",
    "Objective",
    "PostureTask",
    "RelativeFrameTask",
    "Task",
]
