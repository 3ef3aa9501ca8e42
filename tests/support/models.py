"""Models for the tests: built-in ones, Menagerie robots, random configurations.

Menagerie models resolve from ``MENAGERIE_ROOT``; when it is unset and the shared
checkout sits beside the repository (CI, developer machines), that checkout is used.
A test that needs Menagerie fails in CI when no checkout is available, and skips with a
reason elsewhere.

Tests never download a Menagerie robot: importing this module turns posekit's downloads
off (``POSEKIT_MENAGERIE_DOWNLOAD=false``, inherited by every server built from the
environment and every ``posekit up`` subprocess; in-process servers use
:func:`offline_registry`), and points the ``mujoco-menagerie`` package's download URL
(``MENAGERIE_BASE_URL``) at a file that does not exist, so a download anything else
attempted would fail at once instead of reaching the network.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import mujoco
import numpy as np
import pytest
from posekit.ik.configuration import Configuration
from posekit.robots import RobotRegistry

REPO_ROOT = Path(__file__).resolve().parents[2]
_SHARED_MENAGERIE = REPO_ROOT.parent / "shared" / "menagerie"

NO_DOWNLOAD_URL = "file:///nonexistent/posekit-tests-never-download"

if not os.environ.get("MENAGERIE_ROOT") and _SHARED_MENAGERIE.is_dir():
    os.environ["MENAGERIE_ROOT"] = str(_SHARED_MENAGERIE)
os.environ["POSEKIT_MENAGERIE_DOWNLOAD"] = "false"
os.environ["MENAGERIE_BASE_URL"] = NO_DOWNLOAD_URL


def offline_registry() -> RobotRegistry:
    """A robot registry that never downloads (a Menagerie robot that is not under
    ``MENAGERIE_ROOT`` nor cached is unavailable at once), as the tests' servers use."""
    return RobotRegistry(download=False)


def menagerie_available() -> bool:
    root = os.environ.get("MENAGERIE_ROOT")
    return bool(root) and Path(root).is_dir()


def require_menagerie() -> None:
    """Fail in CI, skip elsewhere, when no local Menagerie checkout is configured."""
    if menagerie_available():
        return
    message = "MENAGERIE_ROOT is not set to a Menagerie checkout; tests never download models"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


# Short names used in the tests -> Menagerie registry names.
MENAGERIE_ALIASES = {
    "ur5e": "universal_robots_ur5e",
    "panda": "franka_emika_panda",
    "iiwa14": "kuka_iiwa_14",
    "g1": "unitree_g1",
    "h1": "unitree_h1",
    "tidybot": "stanford_tidybot",
}


@cache
def _menagerie_model(name: str, entry: str | None) -> mujoco.MjModel:
    import mujoco_menagerie as mm

    robot = mm.get(MENAGERIE_ALIASES.get(name, name))
    return robot.model(entry or robot.default_scene)


def menagerie_model(name: str, entry: str | None = None) -> mujoco.MjModel:
    """A compiled Menagerie model (cached per test session; treat it as read-only)."""
    require_menagerie()
    return _menagerie_model(name, entry)


def builtin_model(name: str) -> mujoco.MjModel:
    """A compiled built-in model from ``models/``."""
    return mujoco.MjModel.from_xml_path(str(REPO_ROOT / "models" / f"{name}.xml"))


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


needs_menagerie = pytest.mark.usefixtures("_menagerie")
"""Mark a test that loads Menagerie robots (the ``_menagerie`` fixture is in conftest)."""


LOOSE_ARM_XML = """
<mujoco>
  <worldbody>
    <body name="arm"><joint name="hinge" axis="0 0 1" range="-2 2"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
      <site name="tip" pos="0.3 0 0"/>
    </body>
    <body name="loose" pos="0 1 0"><joint name="drift" type="slide" axis="1 0 0"/>
      <geom type="sphere" size="0.05"/>
    </body>
  </worldbody>
</mujoco>
"""
"""A one-joint arm, and a slide joint on a body of its own that no task or limit of the
tests sees."""


def drifting_configuration() -> Configuration:
    """:data:`LOOSE_ARM_XML` with the loose joint at ``+inf`` (written in place, as
    ``update`` refuses it, and the kinematics updated): a step on the arm stays finite,
    and its integration leaves ``q`` non-finite."""
    model = mujoco.MjModel.from_xml_string(LOOSE_ARM_XML)
    configuration = Configuration(model, np.array([0.3, 0.0]))
    configuration.data.qpos[1] = np.inf
    mujoco.mj_kinematics(model, configuration.data)
    mujoco.mj_comPos(model, configuration.data)
    return configuration
