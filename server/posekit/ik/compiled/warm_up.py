"""Compile (or load from Numba's on-disk cache) every kernel of the compiled step once.

The first ``solve_ik`` of a fresh installation compiles the step kernel, which holds
every task and limit kind (about half a minute of CPU); later processes load it from
``__pycache__`` in a fraction of a second. A server calls :func:`warm_up` before it
takes requests, so that no session waits for the compiler.
"""

from __future__ import annotations

import time

import mujoco
import numpy as np

_XML = """
<mujoco><worldbody>
  <body name="link"><joint name="hinge" axis="0 0 1" range="-1 1"/>
    <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/><site name="tip" pos="0.3 0 0"/>
  </body>
</worldbody></mujoco>
"""


def warm_up() -> float:
    """Solve and integrate one step on a one-joint model; return the seconds it took."""
    import posekit

    start = time.perf_counter()
    model = mujoco.MjModel.from_xml_string(_XML)
    configuration = posekit.Configuration(model)
    tip = posekit.FrameTask("tip", "site", 1.0, 1.0)
    tip.set_target(
        posekit.SE3.from_translation(np.array([0.0, 0.01, 0.0]))
        @ configuration.get_transform_frame_to_world("tip", "site")
    )
    velocity = posekit.solve_ik(configuration, [tip], 0.01, "daqp", damping=1e-6)
    configuration.integrate_inplace(velocity, 0.01)
    return time.perf_counter() - start
