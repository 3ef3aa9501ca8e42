"""Helpers shared by the tests (importable as ``tests_support``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import mujoco
import numpy as np


def wait_for(
    condition: Callable[[], Any], timeout: float = 10.0, what: str = "condition", poll: float = 0.02
) -> Any:
    """Poll ``condition`` every ``poll`` seconds until it is truthy (returned); fail after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not met within {timeout} s")
        time.sleep(poll)


def random_configuration(
    model: mujoco.MjModel, rng: np.random.Generator, margin: float = 0.05
) -> np.ndarray:
    """A random ``qpos`` within joint limits (free joints: random position and orientation)."""
    q = model.qpos0.copy()
    for j in range(model.njnt):
        adr = model.jnt_qposadr[j]
        kind = model.jnt_type[j]
        if kind == mujoco.mjtJoint.mjJNT_FREE:
            q[adr : adr + 3] = rng.uniform(-0.5, 0.5, 3) + np.array([0.0, 0.0, 1.0])
            quat = rng.normal(size=4)
            q[adr + 3 : adr + 7] = quat / np.linalg.norm(quat)
        elif kind == mujoco.mjtJoint.mjJNT_BALL:
            axis = rng.normal(size=3)
            axis /= np.linalg.norm(axis)
            limit = model.jnt_range[j, 1] if model.jnt_limited[j] else np.pi
            angle = rng.uniform(0.0, max(limit - margin, 0.0))
            q[adr : adr + 4] = np.concatenate(([np.cos(angle / 2)], np.sin(angle / 2) * axis))
        else:
            lo, hi = model.jnt_range[j] if model.jnt_limited[j] else (-np.pi, np.pi)
            span = hi - lo
            q[adr] = rng.uniform(lo + margin * span, hi - margin * span)
    return q
