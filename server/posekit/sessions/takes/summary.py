"""Figures of a replay, to compare weight sets on the same take.

Per task: the RMS and the largest of its error norm over the steps where it has one.
For the whole replay: the peak joint speed :math:`\\max_{k,i} |v_{k,i}|` [rad/s or m/s]
and its joint, the time at a joint limit (steps where any limited joint is within
``AT_LIMIT`` of its range's end, times ``dt``) [s], and the steps whose solve failed.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from posekit.sessions.live.binding import SCALAR
from posekit.sessions.takes.replay import Replay

AT_LIMIT = 1e-6  # of a joint's range: closer to its end than this is at the limit


class TaskFigures(BaseModel):
    """A task's error norm over a replay."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"rms": 0.0006, "max": 0.0081}]})
    rms: float | None = Field(description="RMS of the error norm over the steps (null: none).")
    max: float | None = Field(description="Largest error norm.")


class ReplaySummary(BaseModel):
    """One replay's figures (module docstring)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"label": "soft orientation", "steps": 600, "dt": 0.016667,
                 "tasks": {"ee": {"rms": 0.008, "max": 0.0218}}, "peak_speed": 26.0,
                 "peak_speed_joint": "joint4", "seconds_at_limit": 0.0, "failed_steps": 0,
                 "skipped_inputs": 0, "replay_seconds": 0.01}
            ]
        }
    )  # fmt: skip

    label: str = ""
    steps: int
    dt: float = Field(description="[s] of each step.")
    tasks: dict[str, TaskFigures]
    peak_speed: float = Field(description="[rad/s or m/s] the fastest joint's speed.")
    peak_speed_joint: str = Field(description="The DoF's joint (empty without joints).")
    seconds_at_limit: float = Field(description="[s] with a joint at the end of its range.")
    failed_steps: int
    skipped_inputs: int = Field(description="Inputs of the take this spec could not take.")
    replay_seconds: float = Field(description="[s] the replay took.")


def _task(norms: list[float | None]) -> TaskFigures:
    values = [v for v in norms if v is not None and math.isfinite(v)]
    if not values:
        return TaskFigures(rms=None, max=None)
    return TaskFigures(rms=float(np.sqrt(np.mean(np.square(values)))), max=float(max(values)))


def _at_limit(model: mujoco.MjModel, q: np.ndarray) -> int:
    """Steps with a limited hinge or slide at the end of its range."""
    hits = np.zeros(len(q), dtype=bool)
    for joint in range(model.njnt):
        if not model.jnt_limited[joint] or int(model.jnt_type[joint]) not in SCALAR:
            continue
        low, high = model.jnt_range[joint]
        margin = AT_LIMIT * (high - low)
        column = q[:, int(model.jnt_qposadr[joint])]
        hits |= (column <= low + margin) | (column >= high - margin)
    return int(hits.sum())


def summarize(model: mujoco.MjModel, result: Replay, label: str = "") -> ReplaySummary:
    """The figures of ``result`` (module docstring)."""
    speeds = np.abs(result.velocity)
    peak, joint = 0.0, ""
    if speeds.size:
        step, dof = np.unravel_index(int(np.argmax(speeds)), speeds.shape)
        peak, joint = float(speeds[step, dof]), model.joint(int(model.dof_jntid[dof])).name
    return ReplaySummary(
        label=label,
        steps=len(result.status),
        dt=result.dt,
        tasks={name: _task(norms) for name, norms in result.errors.items()},
        peak_speed=peak,
        peak_speed_joint=joint,
        seconds_at_limit=_at_limit(model, result.q) * result.dt,
        failed_steps=sum(status == "failed" for status in result.status),
        skipped_inputs=result.skipped,
        replay_seconds=result.seconds,
    )
