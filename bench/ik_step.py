"""Per-step cost of differential IK, posekit against mink when mink is importable.

A step is: move the targets, ``solve_ik`` with daqp, ``integrate_inplace``. Each
scenario is written once against the mink-compatible API and run with both libraries,
interleaved in blocks in one process, from the same start with the same targets.
Prints median / p90 / p99 in µs per step, the ratio posekit/mink of the medians, and
the largest joint difference between the two trajectories.

    python bench/ik_step.py [--steps 3000] [--blocks 6] [--only S1,S3] [--extra NAME]

``--extra NAME`` times one more importable build of the engine in the same interleaved
blocks (e.g. the previous commit's package copied under another name), for a
before/after comparison in one process; its row shows its ratio to posekit.
"""

from __future__ import annotations

import argparse
import importlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import mujoco
import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHARED_MENAGERIE = REPO.parent / "shared" / "menagerie"
if not os.environ.get("MENAGERIE_ROOT") and SHARED_MENAGERIE.is_dir():
    os.environ["MENAGERIE_ROOT"] = str(SHARED_MENAGERIE)

DT = 0.01


@dataclass
class Problem:
    """One library's instance of a scenario."""

    configuration: object
    tasks: list
    limits: list
    constraints: list
    move_targets: Callable[[int], None]


def menagerie(name: str) -> mujoco.MjModel:
    import mujoco_menagerie as mm

    robot = mm.get(name)
    return robot.model(robot.default_scene)


def builtin(name: str) -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_path(str(REPO / "models" / f"{name}.xml"))


def all_joint_speeds(model: mujoco.MjModel, speed: float) -> dict[str, float]:
    scalar = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
    return {
        model.joint(j).name: speed
        for j in range(model.njnt)
        if int(model.jnt_type[j]) in scalar and model.joint(j).name
    }


def circle(lib: ModuleType, start: object, step: int, radius: float = 0.08) -> object:
    """A pose moving on a circle around ``start`` (period 400 steps)."""
    angle = 2 * np.pi * step / 400
    offset = radius * np.array([np.cos(angle) - 1.0, np.sin(angle), 0.5 * np.sin(2 * angle)])
    return lib.SE3.from_translation(offset) @ start


def arm_problem(
    lib: ModuleType,
    model: mujoco.MjModel,
    keyframe: str,
    frame: tuple[str, str],
    look_at: tuple[str, str] | None = None,
) -> Problem:
    configuration = lib.Configuration(model)
    configuration.update_from_keyframe(keyframe)
    frame_task = lib.FrameTask(*frame, position_cost=1.0, orientation_cost=1.0, lm_damping=1e-6)
    frame_task.set_target_from_configuration(configuration)
    posture = lib.PostureTask(model, cost=1e-2)
    posture.set_target_from_configuration(configuration)
    tasks = [frame_task, posture]
    start = configuration.get_transform_frame_to_world(*frame)
    point = start.translation() + start.rotation().apply(np.array([0.0, 0.0, 0.5]))
    look = None
    if look_at is not None:
        look = lib.LookAtTask(*look_at, axis=(0.0, 0.0, 1.0), cost=0.1, lm_damping=1e-6)
        look.set_target(point)
        tasks.append(look)
    limits = [lib.ConfigurationLimit(model), lib.VelocityLimit(model, all_joint_speeds(model, 3.0))]

    def move(step: int) -> None:
        frame_task.set_target(circle(lib, start, step))
        if look is not None:
            look.set_target(point + 0.1 * np.array([0.0, np.sin(step / 50), 0.0]))

    return Problem(configuration, tasks, limits, [], move)


def humanoid_problem(
    lib: ModuleType,
    model: mujoco.MjModel,
    keyframe: str,
    base: str,
    feet: tuple[str, str],
    hands: tuple[str, str],
) -> Problem:
    configuration = lib.Configuration(model)
    configuration.update_from_keyframe(keyframe)
    pelvis = lib.FrameTask(base, "body", position_cost=0.0, orientation_cost=10.0)
    com = lib.ComTask(cost=10.0)
    foot_tasks = [lib.FrameTask(f, "site", position_cost=10.0, orientation_cost=1.0) for f in feet]
    hand_tasks = [
        lib.FrameTask(h, "site", position_cost=1.0, orientation_cost=0.0, lm_damping=1e-6)
        for h in hands
    ]
    posture = lib.PostureTask(model, cost=1e-1)
    damping = lib.DampingTask(model, cost=1e-3)
    tasks = [pelvis, com, *foot_tasks, *hand_tasks, posture, damping]
    for task in tasks:
        if hasattr(task, "set_target_from_configuration"):
            task.set_target_from_configuration(configuration)
    hand_starts = [configuration.get_transform_frame_to_world(h, "site") for h in hands]
    limits = [lib.ConfigurationLimit(model)]

    def move(step: int) -> None:
        for task, start in zip(hand_tasks, hand_starts, strict=True):
            task.set_target(circle(lib, start, step, radius=0.1))

    return Problem(configuration, tasks, limits, [], move)


def aloha_problem(lib: ModuleType, model: mujoco.MjModel) -> Problem:
    configuration = lib.Configuration(model)
    configuration.update_from_keyframe("neutral_pose")
    grippers = ["left/gripper", "right/gripper"]
    frames = [
        lib.FrameTask(g, "site", position_cost=1.0, orientation_cost=1.0, lm_damping=1e-6)
        for g in grippers
    ]
    posture = lib.PostureTask(model, cost=1e-4)
    tasks = [*frames, posture]
    for task in tasks:
        task.set_target_from_configuration(configuration)
    equality = lib.EqualityConstraintTask(model, cost=1.0)

    def subtree(body: str) -> list[int]:
        return lib.get_subtree_geom_ids(model, model.body(body).id)

    frame_geoms = lib.get_body_geom_ids(model, model.body("metal_frame").id)
    table = [model.geom("table").id]
    pairs = [
        (subtree("left/wrist_link"), subtree("right/wrist_link")),
        (subtree("left/upper_arm_link") + subtree("right/upper_arm_link"), frame_geoms + table),
    ]
    collision = lib.CollisionAvoidanceLimit(
        model, pairs, minimum_distance_from_collisions=0.05, collision_detection_distance=0.1
    )
    limits = [
        lib.ConfigurationLimit(model),
        lib.VelocityLimit(model, all_joint_speeds(model, 3.0)),
        collision,
    ]
    starts = [configuration.get_transform_frame_to_world(g, "site") for g in grippers]

    def move(step: int) -> None:
        for task, start, sign in zip(frames, starts, (1.0, -1.0), strict=True):
            offset = 0.08 * np.array([0.0, sign * np.sin(2 * np.pi * step / 400), 0.0])
            task.set_target(lib.SE3.from_translation(offset) @ start)

    return Problem(configuration, tasks, limits, [equality], move)


SCENARIOS: dict[str, tuple[str, Callable[[ModuleType], Problem]]] = {
    "S1": (
        "UR5e: frame + posture; configuration + velocity limits",
        lambda lib: arm_problem(
            lib, menagerie("universal_robots_ur5e"), "home", ("attachment_site", "site")
        ),
    ),
    "S2": (
        "Panda: frame + look-at + posture; configuration + velocity limits",
        lambda lib: arm_problem(
            lib,
            menagerie("franka_emika_panda"),
            "home",
            ("attachment_site", "site"),
            look_at=("link7", "body"),
        ),
    ),
    "S3": (
        "G1: pelvis, CoM, 2 feet, 2 hands, posture, damping; configuration limit",
        lambda lib: humanoid_problem(
            lib,
            menagerie("unitree_g1"),
            "stand",
            "pelvis",
            ("left_foot", "right_foot"),
            ("left_palm", "right_palm"),
        ),
    ),
    "S4": (
        "ALOHA: 2 frames + posture, joint equalities hard, collisions; config + velocity",
        lambda lib: aloha_problem(lib, menagerie("aloha")),
    ),
    "B1": (
        "arm7 (built-in): frame + look-at + posture; configuration + velocity limits",
        lambda lib: arm_problem(
            lib, builtin("arm7"), "home", ("ee", "site"), look_at=("wrist_cam", "site")
        ),
    ),
    "B2": (
        "humanoid (built-in): pelvis, CoM, 2 feet, 2 hands, posture, damping",
        lambda lib: humanoid_problem(
            lib,
            builtin("humanoid"),
            "stand",
            "pelvis",
            ("left_foot", "right_foot"),
            ("left_hand", "right_hand"),
        ),
    ),
}


def ik_step(lib: ModuleType, problem: Problem, step: int) -> None:
    """One IK step of ``problem`` with engine ``lib``: move the targets to ``step``'s,
    solve with daqp, integrate over :data:`DT`."""
    configuration = problem.configuration
    problem.move_targets(step)
    velocity = lib.solve_ik(
        configuration,
        problem.tasks,
        DT,
        "daqp",
        limits=problem.limits,
        constraints=problem.constraints or None,
    )
    configuration.integrate_inplace(velocity, DT)


def run_block(lib: ModuleType, problem: Problem, first: int, steps: int) -> list[float]:
    """Time ``steps`` IK steps; returns seconds per step."""
    times = []
    for step in range(first, first + steps):
        start = time.perf_counter()
        ik_step(lib, problem, step)
        times.append(time.perf_counter() - start)
    return times


def stats(times: list[float]) -> tuple[float, float, float]:
    micro = np.array(times) * 1e6
    return tuple(float(np.percentile(micro, p)) for p in (50, 90, 99))  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000, help="steps per library per scenario")
    parser.add_argument("--blocks", type=int, default=6, help="interleaved blocks per library")
    parser.add_argument("--only", default="", help="comma-separated scenario ids")
    parser.add_argument(
        "--extra", default="", help="another importable engine build to time alongside"
    )
    args = parser.parse_args()

    libs: dict[str, ModuleType] = {"posekit": importlib.import_module("posekit")}
    if args.extra:
        libs[args.extra] = importlib.import_module(args.extra)
    try:
        libs["mink"] = importlib.import_module("mink")
    except ImportError:
        print("mink is not importable: printing posekit figures only")
    chosen = [s.strip() for s in args.only.split(",") if s.strip()] or list(SCENARIOS)
    per_block = max(1, args.steps // args.blocks)

    header = f"{'':4} {'library':8} {'median µs':>10} {'p90 µs':>9} {'p99 µs':>9}"
    print(header + (f" {'ratio':>6} {'max|Δq|':>9}" if "mink" in libs else ""))
    for key in chosen:
        description, build = SCENARIOS[key]
        problems = {name: build(lib) for name, lib in libs.items()}
        times: dict[str, list[float]] = {name: [] for name in libs}
        for name, lib in libs.items():  # warm-up, not timed
            run_block(lib, problems[name], 0, 20)
        for problem in problems.values():
            problem.configuration.update_from_keyframe(_keyframe_of(problem))
        step = 0
        for _ in range(args.blocks):
            for name, lib in libs.items():
                times[name] += run_block(lib, problems[name], step, per_block)
            step += per_block
        print(f"{key}: {description}")
        medians = {}
        for name in libs:
            median, p90, p99 = stats(times[name])
            medians[name] = median
            line = f"{'':4} {name[:8]:8} {median:10.1f} {p90:9.1f} {p99:9.1f}"
            if name != "mink" and "mink" in libs:
                q_diff = np.max(
                    np.abs(problems[name].configuration.q - problems["mink"].configuration.q)
                )
                line += f" {'':6} {q_diff:9.1e}"
            if name == args.extra:
                line += f"   {median / medians['posekit']:.2f}× posekit"
            print(line)
        if "mink" in libs:
            print(f"{'':4} {'ratio posekit/mink':>28} {medians['posekit'] / medians['mink']:.3f}")


def _keyframe_of(problem: Problem) -> str:
    model = problem.configuration.model
    return model.key(0).name


if __name__ == "__main__":
    main()
