"""A session spec made to fit a recompiled model of its robot (live reload).

The spec's q is carried over joint by joint: a joint of the new model with a joint of
the same name and type in the old one takes its coordinates (moved into the new range,
for hinges and slides); the others start at the new model's default keyframe (or
``qpos0``). Each task is then built alone on the new model: kept when it builds; kept
without its target (which then starts at the task's current value) when only the
target no longer fits (a posture target of another size, say); dropped otherwise. Limits
are built one after another with the session's caps, and dropped when they do not fit.
Nothing here touches a session: :meth:`Session.reload_model` builds the result again
and swaps it in (validate, then swap).
"""

from __future__ import annotations

import time

import mujoco
import numpy as np

from posekit.ik.configuration import Configuration
from posekit.robots.naming import JOINT_QPOS, default_keyframe, joint_type
from posekit.sessions.kinds import LimitSpecBase, TaskSpecBase
from posekit.sessions.live.stack import TaskStack
from posekit.sessions.reload.reload_report import Dropped, ReloadReport
from posekit.sessions.specs.caps import UNLIMITED, StackCaps
from posekit.sessions.specs.session_spec import SessionSpec

MAX_REASON = 300  # characters of an error kept in a report


def _reason(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 1] + "…"


def start_q(model: mujoco.MjModel) -> np.ndarray:
    """The q a new session on ``model`` starts from: its default keyframe, else qpos0."""
    key = default_keyframe(model)
    if key is None:
        return model.qpos0.copy()
    return model.key_qpos[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, key)].copy()


def carry_q(
    old: mujoco.MjModel, new: mujoco.MjModel, q: list[float]
) -> tuple[list[float], int, list[str]]:
    """``q`` of ``old`` as a q of ``new`` (module docstring); (q, joints kept, joints reset)."""
    previous = {
        old.joint(j).name: (joint_type(old, j), int(old.jnt_qposadr[j]))
        for j in range(old.njnt)
        if old.joint(j).name
    }
    result = start_q(new)
    kept, reset = 0, []
    for j in range(new.njnt):
        name, kind, adr = new.joint(j).name, joint_type(new, j), int(new.jnt_qposadr[j])
        width = JOINT_QPOS[kind]
        match = previous.get(name) if name else None
        if match is None or match[0] != kind:
            reset.append(name or f"#{j}")
            continue
        result[adr : adr + width] = q[match[1] : match[1] + width]
        if new.jnt_limited[j] and kind in ("hinge", "slide"):
            result[adr] = float(np.clip(result[adr], *new.jnt_range[j]))
        kept += 1
    return result.tolist(), kept, reset


def fit_spec(
    spec: SessionSpec,
    old: mujoco.MjModel,
    new: mujoco.MjModel,
    caps: StackCaps = UNLIMITED,
) -> tuple[SessionSpec, ReloadReport]:
    """``spec`` (of a session on ``old``) made to fit ``new``, and the report of what
    changed (module docstring); the report's ``robot``, ``entry`` and ``revision`` are
    the caller's to fill in."""
    q, kept, reset = carry_q(old, new, spec.q)
    configuration = Configuration(new, np.asarray(q))
    dt = spec.solver.step_dt
    tasks: list[TaskSpecBase] = []
    dropped_tasks: list[Dropped] = []
    reset_targets: list[Dropped] = []
    for task in spec.tasks:
        try:
            TaskStack.from_specs(new, [task], [], configuration, dt)
            tasks.append(task)
            continue
        except Exception as exc:
            problem = exc
        if task.target is not None:
            bare = task.model_copy(update={"target": None})
            try:
                TaskStack.from_specs(new, [bare], [], configuration, dt)
                tasks.append(bare)
                reset_targets.append(Dropped(name=task.name or "", reason=_reason(problem)))
                continue
            except Exception as exc:
                problem = exc
        dropped_tasks.append(Dropped(name=task.name or "", reason=_reason(problem)))
    limits: list[LimitSpecBase] = []
    dropped_limits: list[Dropped] = []
    for limit in spec.limits:
        try:
            TaskStack.from_specs(new, [], [*limits, limit], configuration, dt, caps)
            limits.append(limit)
        except Exception as exc:
            dropped_limits.append(Dropped(name=limit.name or "", reason=_reason(exc)))
    fitted = spec.model_copy(update={"q": q, "tasks": tasks, "limits": limits})
    report = ReloadReport(
        robot=spec.robot,
        entry=spec.entry or "",
        time=time.time(),
        status="reloaded",
        dropped_tasks=dropped_tasks,
        dropped_limits=dropped_limits,
        reset_targets=reset_targets,
        joints_kept=kept,
        joints_reset=reset,
    )
    return fitted, report
