"""Your own IK loop with a viser viewer: drag the gizmo and the built-in arm follows.

    pip install 'posekit[viewer]'
    python examples/viser_drag.py      # then open http://localhost:8080

No posekit server is involved: the loop below solves IK in this process and draws the
robot with posekit_viewer's SceneRenderer, which viser serves to the browser.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import posekit
import viser
from posekit.demo import builtin_model
from posekit_viewer.scene_renderer import SceneRenderer

DT = 1 / 60  # [s] per solve: one per frame at 60 Hz


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--steps", type=int, default=0, help="stop after this many (0: never)")
    args = parser.parse_args()

    model = builtin_model("arm7")
    configuration = posekit.Configuration(model)
    configuration.update_from_keyframe("home")
    hand = posekit.FrameTask("ee", "site", position_cost=1.0, orientation_cost=0.5)
    posture = posekit.PostureTask(model, cost=1e-2)
    posture.set_target_from_configuration(configuration)
    limits = [posekit.ConfigurationLimit(model), posekit.VelocityLimit(model, {"joint1": 2.0})]

    server = viser.ViserServer(port=args.port)
    robot = SceneRenderer(server, model)
    start = configuration.get_transform_frame_to_world("ee", "site")
    gizmo = server.scene.add_transform_controls(
        "/target", scale=0.15, position=start.translation(), wxyz=start.rotation().wxyz
    )
    error = server.gui.add_number("Hand error (mm)", initial_value=0.0, disabled=True)

    step = 0
    while args.steps == 0 or step < args.steps:
        goal = posekit.SE3.from_rotation_and_translation(
            posekit.SO3(np.asarray(gizmo.wxyz)), np.asarray(gizmo.position)
        )
        hand.set_target(goal)
        velocity = posekit.solve_ik(configuration, [hand, posture], DT, "daqp", limits=limits)
        configuration.integrate_inplace(velocity, DT)
        robot.render(configuration.q)
        error.value = round(1e3 * float(np.linalg.norm(hand.compute_error(configuration)[:3])), 2)
        step += 1
        time.sleep(DT)
    print(f"{step} steps, hand error {error.value} mm")
    server.stop()


if __name__ == "__main__":
    main()
