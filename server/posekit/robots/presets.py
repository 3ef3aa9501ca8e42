"""Default task presets, so that a new session on any robot has something to drag.

End effectors are found by name: sites (preferred) or bodies whose names say gripper,
attachment, pinch, palm, hand, foot, tool, tcp, end effector, ``ee``, fingertip or
distal link, then wrists where nothing deeper was found; cameras, IMUs, fingers and
mocap targets are skipped, and so is anything not moved by a joint. When nothing
matches, the leaves of the kinematic tree are used. A candidate with another
candidate deeper in its own subtree is dropped (a wrist above its tool frame), and
candidates of one hand or tool make one end effector: rigidly joined frames give the
first of them, fingertips the body they branch from (:func:`_one_per_limb`).

The preset is a list of task specs in the session spec format (see
``posekit.sessions.specs``): one frame task per end effector (target: its current
pose), a posture task (cost 1e-3; 1e-2 on floating bases), and on floating-base robots a CoM task with the feet held by
stiff frame tasks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import mujoco

from posekit.robots.category import LEFT, RIGHT
from posekit.robots.naming import is_floating_base

_END_EFFECTOR = re.compile(
    r"gripper|attachment|pinch|palm|hand|foot|tool|tcp|end_?effector|(^|[/_.])ee($|[/_.])"
    r"|tip|distal",
    re.IGNORECASE,
)
_WRIST = re.compile(r"wrist", re.IGNORECASE)
_SKIP = re.compile(r"cam|imu|sensor|finger|light|target|mocap", re.IGNORECASE)
_FOOT = re.compile(r"foot|ankle|toe|sole", re.IGNORECASE)
_POINT_LIKE = re.compile(r"tip|distal", re.IGNORECASE)
_TASK_NAME = re.compile(r"[^A-Za-z0-9_.-]+")

MAX_END_EFFECTORS = 8
# Posture regularisation: weak on fixed-base arms (end effectors reach their targets to
# ~0.1 mm), stronger on floating bases, whose large null space it must settle quickly.
POSTURE_COST = 1e-3
FLOATING_POSTURE_COST = 1e-2
HELD_FOOT_COST = 10.0
POINT_LM_DAMPING = 1.0
"""Levenberg-Marquardt damping of a fingertip's task: its short chain leaves its reach
with a small drag, and undamped steps toward a point out of reach jump by radians near
the stretched-out singularity and cycle (an Allegro thumb raised 3 cm: a 3-step cycle
of 1.7 rad jumps, never parked); damped, it parks at the closest point (40 steps)."""


def task_name(frame_name: str) -> str:
    """A URL-safe task name for a frame (``left/gripper`` → ``left_gripper``)."""
    return _TASK_NAME.sub("_", frame_name).strip("_") or "frame"


def _is_ancestor(model: mujoco.MjModel, ancestor: int, body: int) -> bool:
    while body > 0:
        body = int(model.body_parentid[body])
        if body == ancestor:
            return True
    return False


@dataclass(frozen=True)
class EndEffector:
    """A frame the preset puts a frame task on, and why it was chosen."""

    frame: str
    frame_type: str
    reason: str


_Candidate = tuple[str, int, str]  # (name, body id, reason)


def _pick(
    model: mujoco.MjModel, candidates: list[_Candidate], wrists: list[_Candidate]
) -> list[_Candidate]:
    """Candidates, then wrists with no candidate at or below them.

    Drops any pick with another pick strictly deeper in its subtree.
    """
    chosen = list(candidates)
    for name, body, reason in wrists:
        if not any(b == body or _is_ancestor(model, body, b) for _, b, _ in candidates):
            chosen.append((name, body, reason + " and nothing deeper in its subtree is"))
    deepest = [
        pick
        for pick in chosen
        if not any(_is_ancestor(model, pick[1], other) for _, other, _ in chosen)
    ]
    return _one_per_limb(model, deepest)


HAND_DOF = 4
"""The most joint DoF between a hand's palm and a fingertip (an arm has more)."""


HAND_WRIST_DOF = 2
"""A body carried by at most this many joint DoF (a hand's wrist) is no arm's hand."""


def _dofs_between(model: mujoco.MjModel, ancestor: int, body: int) -> int:
    """Joint DoF from ``ancestor`` (excluded) down to ``body`` (included), a floating
    base's free joint left out (the world carries a floating robot by none)."""
    total = 0
    while body != ancestor and body > 0:
        joints = range(model.body_jntadr[body], model.body_jntadr[body] + model.body_jntnum[body])
        free = any(int(model.jnt_type[j]) == int(mujoco.mjtJoint.mjJNT_FREE) for j in joints)
        total += 0 if free else int(model.body_dofnum[body])
        body = int(model.body_parentid[body])
    return total


def _common_ancestor(model: mujoco.MjModel, a: int, b: int) -> int:
    above = {a}
    while a > 0:
        a = int(model.body_parentid[a])
        above.add(a)
    while b not in above:
        b = int(model.body_parentid[b])
    return b


def _sides(a: str, b: str) -> bool:
    """Whether one name says left and the other right (two hands, never one)."""
    return bool(
        (LEFT.search(a) and RIGHT.search(b) and not RIGHT.search(a))
        or (RIGHT.search(a) and LEFT.search(b) and not LEFT.search(a))
    )


HAND_FAN = 3
"""A body that picks branch from in at least this many chains is a palm (a hand's
fingers, however many joints each has), not a fork of the arm."""


def _fan(model: mujoco.MjModel, meet: int, picks: list[_Candidate]) -> int:
    """How many of ``meet``'s children have a pick in their subtree."""
    children = set()
    for _, body, _ in picks:
        while body > 0 and int(model.body_parentid[body]) != meet:
            body = int(model.body_parentid[body])
        if body > 0:
            children.add(body)
    return len(children)


def _one_per_limb(model: mujoco.MjModel, picks: list[_Candidate]) -> list[_Candidate]:
    """One pick per hand or tool: two picks (not feet, not a left and a right one) that
    meet at a body carried by an arm (more than :data:`HAND_WRIST_DOF` DoF), at most
    :data:`HAND_DOF` joint DoF above each or fanning out into :data:`HAND_FAN` chains or
    more there (a palm), are one end effector — the first of them when they are rigidly
    joined (``ee_link`` and ``tool0`` of one flange), else the body they branch from (the
    palm of a gripper's fingers)."""
    merged: list[_Candidate] = []
    for pick in picks:
        for index, kept in enumerate(merged):
            if _FOOT.search(pick[0]) or _FOOT.search(kept[0]) or _sides(pick[0], kept[0]):
                continue
            meet = _common_ancestor(model, pick[1], kept[1])
            if _dofs_between(model, 0, meet) <= HAND_WRIST_DOF:
                continue  # a hand alone (its fingers are the end effectors) or the base
            spread = max(_dofs_between(model, meet, pick[1]), _dofs_between(model, meet, kept[1]))
            if spread > HAND_DOF and _fan(model, meet, picks) < HAND_FAN:
                continue
            if spread > 0:
                name = model.body(meet).name
                why = f"the body {kept[0]!r} and {pick[0]!r} branch from (one hand or gripper)"
                merged[index] = (name or kept[0], meet if name else kept[1], why)
            break
        else:
            merged.append(pick)
    return merged


def _named_candidates(
    model: mujoco.MjModel, obj: mujoco.mjtObj, count: int, body_of: Any
) -> tuple[list[_Candidate], list[_Candidate]]:
    matches, wrists = [], []
    for i in range(count):
        name = mujoco.mj_id2name(model, obj, i)
        body = int(body_of(i))
        if not name or _SKIP.search(name) or model.body_weldid[body] == 0:
            continue  # unnamed, a camera/finger/target, or fixed to the world
        if found := _END_EFFECTOR.search(name):
            matches.append((name, body, f"its name says end effector ({found.group(0)!r})"))
        elif found := _WRIST.search(name):
            wrists.append((name, body, f"its name says wrist ({found.group(0)!r})"))
    return matches, wrists


def end_effector_choices(model: mujoco.MjModel) -> list[EndEffector]:
    """The natural end effectors (module docstring), each with the reason it was chosen."""
    site_of = model.site_bodyid
    sites = _pick(
        model,
        *_named_candidates(model, mujoco.mjtObj.mjOBJ_SITE, model.nsite, lambda i: site_of[i]),
    )
    if sites:
        return [EndEffector(name, "site", why) for name, _, why in sites[:MAX_END_EFFECTORS]]
    bodies = _pick(
        model, *_named_candidates(model, mujoco.mjtObj.mjOBJ_BODY, model.nbody, lambda i: i)
    )
    if not bodies:
        parents = set(int(p) for p in model.body_parentid[1:])
        bodies = [
            (model.body(b).name, b, "a leaf of the kinematic tree (no site or body is named "
             "like an end effector)")
            for b in range(1, model.nbody)
            if b not in parents and model.body(b).name and model.body_weldid[b] != 0
        ]  # fmt: skip
    return [EndEffector(name, "body", why) for name, _, why in bodies[:MAX_END_EFFECTORS]]


def end_effectors(model: mujoco.MjModel) -> list[tuple[str, str]]:
    """``(frame_name, frame_type)`` of the natural end effectors (module docstring)."""
    return [(choice.frame, choice.frame_type) for choice in end_effector_choices(model)]


def default_preset(model: mujoco.MjModel) -> list[dict[str, Any]]:
    """Task specs of the default preset (module docstring); targets are left unset."""
    return [task for task, _ in preset_with_reasons(model)]


def preset_reasons(model: mujoco.MjModel) -> dict[str, str]:
    """Each preset task's name → why the preset has it (which frame, chosen how)."""
    return {task["name"]: why for task, why in preset_with_reasons(model)}


def preset_with_reasons(model: mujoco.MjModel) -> list[tuple[dict[str, Any], str]]:
    """The default preset's task specs, each with the reason it is there."""
    floating = is_floating_base(model)
    tasks: list[tuple[dict[str, Any], str]] = []
    used: set[str] = set()
    for choice in end_effector_choices(model):
        name = task_name(choice.frame)
        while name in used or name in ("posture", "com"):
            name += "_"
        used.add(name)
        held = floating and bool(_FOOT.search(choice.frame))
        point = bool(_POINT_LIKE.search(choice.frame))
        why = f"{choice.frame_type} {choice.frame!r}: {choice.reason}"
        if held:
            why += "; a foot of a floating base, held in place by a stiff task"
        elif point:
            why += "; a fingertip-like point: position only, damped (it parks short of a point out of reach)"
        params = {
            "frame": choice.frame,
            "frame_type": choice.frame_type,
            "position_cost": HELD_FOOT_COST if held else 1.0,
            "orientation_cost": HELD_FOOT_COST if held else (0.0 if point else 1.0),
        }
        if point and not held:
            params["lm_damping"] = POINT_LM_DAMPING
        tasks.append(({"name": name, "type": "frame", "params": params}, why))
    if floating:
        tasks.append(
            (
                {"name": "com", "type": "com", "params": {"cost": 1.0}},
                "floating base: the center of mass is kept where it starts (balance)",
            )
        )
    posture_cost = FLOATING_POSTURE_COST if floating else POSTURE_COST
    tasks.append(
        (
            {"name": "posture", "type": "posture", "params": {"cost": posture_cost}},
            "every robot: a weak pull towards the start pose settles the joints the other "
            "tasks leave free",
        )
    )
    return tasks


def default_limits(model: mujoco.MjModel) -> list[dict[str, Any]]:
    """Limit specs every new session gets: the joint ranges."""
    return [{"name": "configuration", "type": "configuration", "params": {}}]
