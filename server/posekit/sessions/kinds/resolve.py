"""Names in specs → model ids, with errors that list the valid names."""

from __future__ import annotations

import re

import mujoco
import numpy as np

from posekit.ik.exceptions import InvalidConstraint, TaskDefinitionError
from posekit.robots.naming import JOINT_DOFS, equality_names, joint_type, named
from posekit.sessions.errors import known_names

_UNNAMED = re.compile(r"^#(\d+)$")


def joint_id(model: mujoco.MjModel, name: str, error: type[Exception] = TaskDefinitionError) -> int:
    """The id of a named joint; ``error`` (listing the valid names) when there is none."""
    jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
    if jid < 0:
        valid = named(model, mujoco.mjtObj.mjOBJ_JOINT, model.njnt)
        raise error(f"joint {name!r} does not exist; valid joints are {known_names(valid)}")
    return int(jid)


def joint_dofs(model: mujoco.MjModel, name: str) -> list[int]:
    """Indices in the velocity vector of a named joint's degrees of freedom."""
    jid = joint_id(model, name)
    start = int(model.jnt_dofadr[jid])
    return list(range(start, start + JOINT_DOFS[joint_type(model, jid)]))


def per_dof_cost(model: mujoco.MjModel, cost: float | dict[str, float]) -> float | np.ndarray:
    """A scalar cost as is, or ``{joint: cost}`` as a vector of size nv (others 0)."""
    if not isinstance(cost, dict):
        return cost
    vector = np.zeros(model.nv)
    for name, value in cost.items():
        vector[joint_dofs(model, name)] = value
    return vector


def equality_refs(model: mujoco.MjModel, names: list[str] | None) -> list[int | str] | None:
    """Equality names with ``"#<id>"`` turned into ids (validated by the engine)."""
    if names is None:
        return None
    refs: list[int | str] = []
    for name in names:
        match = _UNNAMED.match(name)
        if match and mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_EQUALITY, name) < 0:
            eq_id = int(match.group(1))
            if eq_id >= model.neq:
                raise InvalidConstraint(
                    f"equality {name!r} does not exist; the model's equalities are "
                    f"{known_names(equality_names(model))}"
                )
            refs.append(eq_id)
        else:
            refs.append(name)
    return refs
