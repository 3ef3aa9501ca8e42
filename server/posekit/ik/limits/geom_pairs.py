"""Geom pairs for collision avoidance: name resolution, group expansion, filtering.

A pair group ``(A, B)`` names two sets of geoms; it expands to every geom of ``A``
against every geom of ``B``. Each side is a sequence of geom names, geom ids or body
names (a bare name or id counts as a one-element side). A string is looked up as a
geom name first and, only when no geom has that name, as a body name, which stands for
every geom attached to that body (possibly none).

Expanded pairs that MuJoCo itself would never report as a contact are dropped:

- both geoms on the same body, or on bodies welded together (same ``body_weldid``);
- geoms on welded bodies in a parent/child relation (the weld of one is the weld of the
  other's parent), unless that parent weld is the world: a free-floating body and the
  floor still collide, as they do in MuJoCo;
- geoms failing the contype/conaffinity test
  ``(contype1 & conaffinity2) || (contype2 & conaffinity1)``.

Surviving pairs are ordered ``(g1, g2)`` with ``g1 < g2`` and deduplicated, keeping the
order in which they first appear.
"""

from __future__ import annotations

from collections.abc import Sequence

import mujoco
import numpy as np

from posekit.ik.exceptions import InvalidGeomPair, LimitDefinitionError

GeomRef = str | int
GeomSide = GeomRef | Sequence[GeomRef]
GeomPairGroups = Sequence[tuple[GeomSide, GeomSide]]

_MAX_LISTED = 8


def _some_names(model: mujoco.MjModel, obj: mujoco.mjtObj, count: int) -> str:
    names = [n for n in (mujoco.mj_id2name(model, obj, i) for i in range(count)) if n]
    shown = ", ".join(repr(n) for n in names[:_MAX_LISTED])
    extra = len(names) - _MAX_LISTED
    return f"[{shown}{f', … ({extra} more)' if extra > 0 else ''}]"


def _unknown(model: mujoco.MjModel, what: str) -> InvalidGeomPair:
    return InvalidGeomPair(
        f"{what} Available geom names: "
        f"{_some_names(model, mujoco.mjtObj.mjOBJ_GEOM, model.ngeom)}; body names (a body "
        f"stands for its geoms): {_some_names(model, mujoco.mjtObj.mjOBJ_BODY, model.nbody)}"
    )


def resolve_geom_ref(model: mujoco.MjModel, ref: object) -> list[int]:
    """Geom ids named by one geom name, geom id or body name (see the module docstring)."""
    if isinstance(ref, str):
        geom_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, ref)
        if geom_id >= 0:
            return [geom_id]
        body_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, ref)
        if body_id >= 0:
            start = int(model.body_geomadr[body_id])
            return list(range(start, start + int(model.body_geomnum[body_id])))
        raise _unknown(
            model,
            f"geom '{ref}' does not exist in the model. Nor does a body of that name "
            "(geom_pairs take geom and body names).",
        )
    if isinstance(ref, (int, np.integer)) and not isinstance(ref, (bool, np.bool_)):
        if 0 <= int(ref) < model.ngeom:
            return [int(ref)]
        raise _unknown(
            model,
            f"geom id {int(ref)} is out of range for this model; expected 0 <= id < "
            f"{model.ngeom}. (in geom_pairs)",
        )
    raise _unknown(
        model,
        f"{ref!r} (type {type(ref).__name__}) is not a geom name, id or body name, in geom_pairs.",
    )


def resolve_side(model: mujoco.MjModel, side: object) -> list[int]:
    """Geom ids of one side of a pair group, in order, without repeats."""
    refs = [side] if isinstance(side, (str, int, np.integer)) else side
    try:
        refs = list(refs)  # type: ignore[call-overload]
    except TypeError:
        raise _unknown(
            model, f"{side!r} is not a geom name, id, body name or sequence of them"
        ) from None
    geoms: dict[int, None] = {}
    for ref in refs:
        geoms.update(dict.fromkeys(resolve_geom_ref(model, ref)))
    return list(geoms)


def can_collide(model: mujoco.MjModel, geom1: int, geom2: int) -> bool:
    """Whether MuJoCo could report a contact between two geoms (filters above)."""
    weld1 = int(model.body_weldid[model.geom_bodyid[geom1]])
    weld2 = int(model.body_weldid[model.geom_bodyid[geom2]])
    if weld1 == weld2:  # covers the same body
        return False
    parent_weld1 = int(model.body_weldid[model.body_parentid[weld1]])
    parent_weld2 = int(model.body_weldid[model.body_parentid[weld2]])
    if (weld1 != 0 and weld1 == parent_weld2) or (weld2 != 0 and weld2 == parent_weld1):
        return False
    contype1, conaffinity1 = int(model.geom_contype[geom1]), int(model.geom_conaffinity[geom1])
    contype2, conaffinity2 = int(model.geom_contype[geom2]), int(model.geom_conaffinity[geom2])
    return bool((contype1 & conaffinity2) or (contype2 & conaffinity1))


def expand_geom_pairs(model: mujoco.MjModel, geom_pairs: GeomPairGroups) -> list[tuple[int, int]]:
    """Every collidable ``(g1, g2)``, ``g1 < g2``, of the groups, deduplicated in order."""
    if isinstance(geom_pairs, (str, bytes)) or not isinstance(geom_pairs, Sequence):
        raise LimitDefinitionError(
            f"geom_pairs must be a sequence of pair groups (A, B), got {geom_pairs!r}"
        )
    collidable: dict[tuple[int, int], bool] = {}
    for group in geom_pairs:
        if isinstance(group, (str, bytes)) or not isinstance(group, Sequence) or len(group) != 2:
            raise LimitDefinitionError(
                f"each entry of geom_pairs must be a pair (A, B) of geom/body names or geom "
                f"ids, got {group!r}"
            )
        side_a = resolve_side(model, group[0])
        side_b = resolve_side(model, group[1])
        for geom_a in side_a:
            for geom_b in side_b:
                pair = (geom_a, geom_b) if geom_a < geom_b else (geom_b, geom_a)
                if pair not in collidable:
                    collidable[pair] = can_collide(model, *pair)
    return [pair for pair, keep in collidable.items() if keep]
