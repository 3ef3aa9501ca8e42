"""How fast a take replays: a 10 s drag at 60 Hz, replayed offline.

For each robot (arm7, and Menagerie's ``unitree_g1`` and ``aloha`` when
``MENAGERIE_ROOT`` has them): a session with the robot's default preset is stepped 600
times (10 s at 60 Hz) while its first frame task's target moves on a 5 cm circle every
third step (20 Hz), recorded as a take; the take is then replayed through the same spec.
Printed: the replay's wall time, its steps per second, and whether a second replay gave
the same q bit for bit.

    python bench/take_replay.py [--robots arm7,unitree_g1,aloha] [--seconds 10]
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from posekit.robots import RobotRegistry
from posekit.robots.errors import RobotUnavailable
from posekit.sessions import Session
from posekit.sessions.specs.initial_spec import initial_spec
from posekit.sessions.specs.session_spec import NewSession
from posekit.sessions.takes.replay import replay
from posekit.sessions.takes.take import Take

RATE_HZ = 60.0
RADIUS = 0.05  # [m]


def record(registry: RobotRegistry, robot: str, seconds: float) -> tuple[Session, Take]:
    """A session on ``robot`` and the take of its drag (module docstring)."""
    spec, model, entry = initial_spec(registry, NewSession(robot=robot))
    session = Session("bench", spec, model, entry)
    frame = next(task for task in spec.tasks if task.type == "frame")
    center = np.asarray(session.task(frame.name).target.position)  # type: ignore[union-attr]
    session.start_take("drag")
    steps = int(seconds * RATE_HZ)
    for k in range(steps):
        if k % 3 == 0:
            angle = 2 * math.pi * k / steps
            offset = RADIUS * np.array([0.0, math.sin(angle), math.cos(angle) - 1.0])
            session.move_target(frame.name, {"position": (center + offset).tolist()})
        session.step()
    return session, session.stop_take()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", default="arm7,unitree_g1,aloha")
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    registry = RobotRegistry(download=False)
    print(f"{'robot':14s} {'steps':>6s} {'replay s':>9s} {'steps/s':>9s}  bit-identical")
    for robot in args.robots.split(","):
        try:
            session, take = record(registry, robot, args.seconds)
        except RobotUnavailable:
            print(f"{robot:14s} not available here (MENAGERIE_ROOT)")
            continue
        first = replay(take, session.model, session.entry)
        second = replay(take, session.model, session.entry)
        same = bool(np.array_equal(first.q, second.q))
        rate = len(first.status) / first.seconds
        print(f"{robot:14s} {len(first.status):6d} {first.seconds:9.3f} {rate:9.0f}  {same}")


if __name__ == "__main__":
    main()
