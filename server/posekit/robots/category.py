"""A robot's category guessed from its names, in MuJoCo Menagerie's words.

Menagerie files its robots as ``arm``, ``dual_arm``, ``end_effector`` (grippers and
hands), ``humanoid``, ``biped``, ``quadruped``, ``mobile_base``, ``mobile_manipulator``,
``drone`` and ``misc``. A robot of one's own is put in one of them from the names of
its bodies (links) and joints and whether it has a free (floating) joint, by the
first rule that applies:

============================================  ====================
what the names say                             category
============================================  ====================
floating, four legs (feet, or knee sets ×4)    quadruped
floating, legs and arms (elbow, wrist, hand)   humanoid
floating, legs                                 biped
rotor, propeller, drone, quadcopter            drone
wheels and an arm or gripper                   mobile_manipulator
wheels                                         mobile_base
a left and a right arm                         dual_arm
fingers, gripper or palm, no arm, short chain  end_effector
any joint                                      arm
nothing moves                                  misc
============================================  ====================
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_DRONE = re.compile(r"rotor|propell|drone|quadcopter|multicopter", re.IGNORECASE)
_LEG = re.compile(r"leg|knee|thigh|calf|shin|ankle|foot|hip", re.IGNORECASE)
_ARM = re.compile(r"arm|shoulder|elbow|wrist|forearm", re.IGNORECASE)
_WHEEL = re.compile(r"wheel|caster", re.IGNORECASE)
_GRASP = re.compile(r"finger|thumb|gripper|palm|knuckle|jaw|pad", re.IGNORECASE)
LEFT = re.compile(r"(^|[_/.-])(l|left)([_/.-]|$)|left", re.IGNORECASE)
RIGHT = re.compile(r"(^|[_/.-])(r|right)([_/.-]|$)|right", re.IGNORECASE)
"""A name that says left (``l_hand``, ``left_arm``, ``arm_l``), or right."""
_UPPER_LIMB = re.compile(r"(^|[_/.-])arm|wrist|elbow|hand|gripper|forearm", re.IGNORECASE)
_KNEE = re.compile(r"knee|calf|shin", re.IGNORECASE)


def _legs(names: Sequence[str]) -> int:
    """How many legs the names suggest: knee-like links, else named legs."""
    knees = {n for n in names if _KNEE.search(n)}
    return len(knees) or len({n for n in names if re.search(r"leg", n, re.IGNORECASE)})


def looks_legged(bodies: Sequence[str]) -> bool:
    """Whether a robot's links name two legs or more (a URDF that gets a floating base:
    :func:`posekit.robots.compile_worker.float_root`); a robot with a link named
    ``world`` is fixed to it."""
    if any(name.lower() == "world" for name in bodies):
        return False
    return _legs(bodies) >= 2 or _feet(bodies) >= 2


def _feet(bodies: Sequence[str]) -> int:
    """How many feet the link names suggest: foot-like names counted once per first
    word (``l_foot`` and ``l_foot_dh_frame`` are one foot; ``FL_foot``, ``FR_foot``…)."""
    feet = [n for n in bodies if re.search(r"foot|sole|toe", n, re.IGNORECASE)]
    return len({re.split(r"[_/.-]", n.lower())[0] for n in feet})


def guess_category(
    name: str,
    bodies: Sequence[str],
    joints: Sequence[str],
    floating: bool,
    serial_dofs: int | None = None,
) -> str:
    """The category of the module docstring's table; ``serial_dofs``, when known, the
    DoF of the chain from the root to the tree's first branch (an arm's 6 or 7 make it
    no end effector whatever its gripper is called)."""
    names = [name, *bodies, *joints]
    text = " ".join(names)
    if floating and any(_LEG.search(n) for n in names):
        feet = _feet(bodies)
        legs = feet if feet >= 2 else _legs(bodies or joints)
        if legs >= 4:
            return "quadruped"
        return "humanoid" if any(_UPPER_LIMB.search(n) for n in names) else "biped"
    if _DRONE.search(text):
        return "drone"
    arms = any(_ARM.search(n) for n in names)
    if _WHEEL.search(text):
        return "mobile_manipulator" if arms or _GRASP.search(text) else "mobile_base"
    arm_names = [n for n in names if _ARM.search(n)]
    if any(LEFT.search(n) for n in arm_names) and any(RIGHT.search(n) for n in arm_names):
        return "dual_arm"
    long_chain = serial_dofs is not None and serial_dofs >= 4
    if _GRASP.search(text) and not arms and not long_chain:
        return "end_effector"
    return "arm" if joints else "misc"
