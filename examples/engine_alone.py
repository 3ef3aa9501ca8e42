"""The engine alone: the built-in arm draws a circle with its hand while keeping the
hand level, its elbow near home and every joint inside its range and speed limits.

    pip install posekit
    python examples/engine_alone.py [--laps N]

Prints, per quarter lap, the hand's position error (mm), its tilt (mrad) and the
fastest joint's speed (rad/s).
"""

from __future__ import annotations

import argparse

import numpy as np
import posekit
from posekit.demo import builtin_model

RADIUS = 0.08  # [m] of the circle, in the world's y-z plane around the home hand
PERIOD = 4.0  # [s] per lap
DT = 0.01  # [s] per solve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--laps", type=float, default=2.0, help="laps to draw (default 2)")
    laps = parser.parse_args().laps

    model = builtin_model("arm7")
    configuration = posekit.Configuration(model)
    configuration.update_from_keyframe("home")
    home = configuration.get_transform_frame_to_world("ee", "site")

    hand = posekit.FrameTask("ee", "site", position_cost=1.0, orientation_cost=0.5)
    posture = posekit.PostureTask(model, cost=1e-3)
    posture.set_target_from_configuration(configuration)
    limits = [posekit.ConfigurationLimit(model), posekit.VelocityLimit(model, {"joint1": 1.5})]

    steps = int(laps * PERIOD / DT)
    for step in range(1, steps + 1):
        angle = 2 * np.pi * step * DT / PERIOD
        offset = RADIUS * np.array([0.0, np.sin(angle), np.cos(angle) - 1.0])
        hand.set_target(posekit.SE3.from_translation(offset) @ home)
        velocity = posekit.solve_ik(configuration, [hand, posture], DT, "daqp", limits=limits)
        configuration.integrate_inplace(velocity, DT)
        if step % int(PERIOD / DT / 4) == 0:
            error = hand.compute_error(configuration)
            print(
                f"t={step * DT:5.2f} s  position error {1e3 * np.linalg.norm(error[:3]):.3f} mm"
                f"  tilt {1e3 * np.linalg.norm(error[3:]):.3f} mrad"
                f"  fastest joint {np.abs(velocity).max():.2f} rad/s"
            )


if __name__ == "__main__":
    main()
