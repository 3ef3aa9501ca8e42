"""A robot's category guessed from its names, in MuJoCo Menagerie's words.

Menagerie files its robots as ``arm``, ``dual_arm``, ``end_effector`` (grippers and
hands), ``humanoid``, ``biped``, ``quadruped``, ``mobile_base``, ``mobile_manipulator``,
``drone`` and ``misc``. A robot of one's own is put in one of them from the names of
its bodies (links) and joints and whether it has a free (floating) joint, by the
first rule that applies:

============================================  ====================
what the names say                             category
============================================  ====================
rotor, propeller, drone, quadcopter            drone
floating, legs and arms                        humanoid
floating, four legs (or hip/knee sets ×4)      quadruped
floating, legs                                 biped
wheels and an arm or gripper                   mobile_manipulator
wheels                                         mobile_base
a left and a right arm                         dual_arm
fingers, gripper or palm, and no arm           end_effector
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
_LEFT = re.compile(r"(^|[_/.-])(l|left)[_/.-]|left", re.IGNORECASE)
_RIGHT = re.compile(r"(^|[_/.-])(r|right)[_/.-]|right", re.IGNORECASE)
_KNEE = re.compile(r"knee|calf|shin", re.IGNORECASE)


def _legs(names: Sequence[str]) -> int:
    """How many legs the names suggest: knee-like links, else named legs."""
    knees = {n for n in names if _KNEE.search(n)}
    return len(knees) or len({n for n in names if re.search(r"leg", n, re.IGNORECASE)})


def guess_category(name: str, bodies: Sequence[str], joints: Sequence[str], floating: bool) -> str:
    """The category of the module docstring's table."""
    names = [name, *bodies, *joints]
    text = " ".join(names)
    legs = any(_LEG.search(n) for n in names)
    arms = any(_ARM.search(n) for n in names)
    if _DRONE.search(text):
        return "drone"
    if floating and legs and arms:
        return "humanoid"
    if floating and legs:
        return "quadruped" if _legs(bodies or joints) >= 4 else "biped"
    if _WHEEL.search(text):
        return "mobile_manipulator" if arms or _GRASP.search(text) else "mobile_base"
    arm_names = [n for n in names if _ARM.search(n)]
    if any(_LEFT.search(n) for n in arm_names) and any(_RIGHT.search(n) for n in arm_names):
        return "dual_arm"
    if _GRASP.search(text) and not arms:
        return "end_effector"
    return "arm" if joints else "misc"
