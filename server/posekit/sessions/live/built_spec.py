"""A session spec built into what a session runs: its configuration and task stack."""

from __future__ import annotations

from dataclasses import dataclass

import mujoco

from posekit.ik.configuration import Configuration
from posekit.sessions.live.q_check import check_q
from posekit.sessions.live.stack import TaskStack
from posekit.sessions.specs.caps import StackCaps
from posekit.sessions.specs.session_spec import SessionSpec


@dataclass(frozen=True)
class BuiltSpec:
    """The configuration at the spec's q, the stack of its tasks and limits (targets
    completed at that q), and the spec as it now stands (canonical)."""

    configuration: Configuration
    stack: TaskStack
    canonical: SessionSpec

    @classmethod
    def build(
        cls, spec: SessionSpec, model: mujoco.MjModel, entry: str, caps: StackCaps
    ) -> BuiltSpec:
        """Build everything (every name and value is checked; nothing is shared)."""
        configuration = Configuration(model, q=check_q(model, spec.q))
        stack = TaskStack.from_specs(
            model, spec.tasks, spec.limits, configuration, spec.solver.step_dt, caps
        )
        canonical = spec.model_copy(
            update={
                "entry": entry,
                "q": configuration.data.qpos.tolist(),
                "tasks": stack.task_specs(),
                "limits": stack.limit_specs(),
            }
        )
        return cls(configuration, stack, canonical)
