"""Compile one robot model with MuJoCo: in this process, or as a short-lived child.

:func:`compile_model` is how every robot from files is compiled (through
:class:`mujoco.MjSpec`; a URDF gets a ``home`` keyframe). Run as a script
(``python -I compile_worker.py``) it reads one request as JSON on stdin, ``{"path",
"xml", "kind", "floating", "memory_bytes", "read", "step_budget_ms"}``, limits its own
address space, confines its file reads to the ``read`` folders
(:mod:`posekit.robots.confinement`), compiles, times a few IK steps of the default
preset (:mod:`posekit.robots.step_cost`, when given a budget) and prints
``{"ok": true, "stats": {…}}`` or ``{"ok": false, "error": "…"}``: the upload check of
:mod:`posekit.robots.compile_check`, so that a pathological model cannot wedge or
exhaust the server.
"""

from __future__ import annotations

import json
import math
import resource
import sys
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

HOME_KEYFRAME = "home"
FREE = int(mujoco.mjtJoint.mjJNT_FREE)


LIMIT_MARGIN = 0.1  # of a joint's range: how far inside its limits a home joint stays
BEND = 0.35  # [rad] or [m]: how far the bent home candidate moves each joint
SINGULAR = math.log(2.0)  # the zero home is kept unless another is this much better


def add_home_keyframe(spec: mujoco.MjSpec, model: mujoco.MjModel) -> bool:
    """Add keyframe ``home`` unless the model has one (whether it was added).

    Differential IK cannot leave a singular configuration in the direction it lost, and
    "every joint at 0" is one for most arms and legs (stretched out). So the home is
    the best conditioned of a few candidates: ``qpos0`` moved into every joint's range,
    a tenth of it away from its limits (kept unless another is twice as good), the
    middle of the ranges, every hinge and slide bent by :data:`BEND`, and halfway
    between the first two. A candidate's score
    is the mean over the tree's leaf bodies of ``log σ_k``, the smallest singular value
    its position Jacobian can have non-zero (``k = min(3, its DoF)``). A floating base
    stands on the floor: its lowest geom at ``z = 0``.
    """
    if any(key.name == HOME_KEYFRAME for key in spec.keys):
        return False
    clipped = _in_range(model, model.qpos0.copy())
    middle = _in_range(model, model.qpos0.copy(), middle=True)
    candidates = [clipped, middle, _in_range(model, _bent(model, clipped)), (clipped + middle) / 2]
    data = mujoco.MjData(model)
    scores = [_conditioning(model, data, q) for q in candidates]  # all in range
    best = int(np.argmax(scores))
    q = candidates[0] if scores[0] >= scores[best] - SINGULAR else candidates[best]
    q = _on_floor(model, data, q)
    spec.add_key(name=HOME_KEYFRAME, qpos=q.tolist())
    return True


def _free_joints(model: mujoco.MjModel) -> list[int]:
    return [j for j in range(model.njnt) if int(model.jnt_type[j]) == FREE]


def _moving_joints(model: mujoco.MjModel) -> list[int]:
    kinds = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
    return [j for j in range(model.njnt) if int(model.jnt_type[j]) in kinds]


def _in_range(model: mujoco.MjModel, q: np.ndarray, middle: bool = False) -> np.ndarray:
    """``q`` with every limited hinge or slide in its range, :data:`LIMIT_MARGIN` of it
    inside its limits (at its middle: ``middle``)."""
    q = q.copy()
    for joint in _moving_joints(model):
        if model.jnt_limited[joint]:
            adr = int(model.jnt_qposadr[joint])
            low, high = model.jnt_range[joint]
            margin = LIMIT_MARGIN * (high - low)  # a joint at its limit can move one way
            q[adr] = (
                (low + high) / 2 if middle else float(np.clip(q[adr], low + margin, high - margin))
            )
    return q


def _bent(model: mujoco.MjModel, q: np.ndarray) -> np.ndarray:
    q = q.copy()
    for joint in _moving_joints(model):
        q[int(model.jnt_qposadr[joint])] += BEND
    return q


def _conditioning(model: mujoco.MjModel, data: mujoco.MjData, q: np.ndarray) -> float:
    """The score of :func:`add_home_keyframe`'s docstring (higher: better conditioned)."""
    data.qpos[:] = q
    mujoco.mj_kinematics(model, data)
    mujoco.mj_comPos(model, data)
    parents = set(int(p) for p in model.body_parentid[1:])
    jacp = np.zeros((3, model.nv))
    free = [int(model.jnt_dofadr[j]) + i for j in _free_joints(model) for i in range(6)]
    logs = []
    for body in range(1, model.nbody):
        if body in parents:
            continue
        mujoco.mj_jacBody(model, data, jacp, None, body)
        jacobian = np.delete(jacp, free, axis=1)
        dofs = int(np.count_nonzero(np.abs(jacobian).sum(axis=0)))
        if dofs == 0:
            continue
        sigma = np.linalg.svd(jacobian, compute_uv=False)[min(3, dofs) - 1]
        logs.append(math.log(sigma + 1e-9))
    return float(np.mean(logs)) if logs else 0.0


def _on_floor(model: mujoco.MjModel, data: mujoco.MjData, q: np.ndarray) -> np.ndarray:
    """``q`` with a floating root raised or lowered so that its lowest geom is at z = 0."""
    free = _free_joints(model)
    if not free or model.ngeom == 0:
        return q
    data.qpos[:] = q
    mujoco.mj_kinematics(model, data)
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
    lowest = math.inf
    for geom in range(model.ngeom):
        center, half = model.geom_aabb[geom, :3], model.geom_aabb[geom, 3:]
        points = (center + corners * half) @ data.geom_xmat[geom].reshape(3, 3).T
        lowest = min(lowest, float((points[:, 2] + data.geom_xpos[geom, 2]).min()))
    q = q.copy()
    q[int(model.jnt_qposadr[free[0]]) + 2] -= lowest
    return q


def float_root(spec: mujoco.MjSpec) -> bool:
    """Give the robot's root body a free joint (a legged URDF, whose root MuJoCo's
    importer fixes to the world); whether it did (not when it has a joint already)."""
    roots = list(spec.worldbody.bodies)
    if len(roots) != 1 or list(roots[0].joints):
        return False
    roots[0].add_freejoint()
    return True


def compile_model(kind: str, path: str, xml: str | None, floating: bool = False) -> mujoco.MjModel:
    """Compile an MJCF file (``xml`` None) or URDF text rewritten for MuJoCo; ``floating``:
    the URDF's root gets a free joint (:func:`float_root`)."""
    spec = mujoco.MjSpec.from_file(path) if xml is None else mujoco.MjSpec.from_string(xml)
    if kind == "urdf":
        # A URDF gives every link's inertia: a mesh's volume is not needed, and a thin
        # visual mesh (a plate, a decal) must not be refused for having almost none.
        for mesh in spec.meshes:
            mesh.inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL
        if floating:
            float_root(spec)
    model = spec.compile()
    if kind == "urdf" and add_home_keyframe(spec, model):
        model = spec.compile()
    return model


def model_stats(model: mujoco.MjModel) -> dict[str, Any]:
    """Sizes a cap is checked against, and names to guess the robot's category from."""
    return {
        "bodies": int(model.nbody),
        "geoms": int(model.ngeom),
        "mesh_vertices": int(model.nmeshvert),
        "dofs": int(model.nv),
        "hfield_samples": int(model.nhfielddata),
        "texture_bytes": int(model.ntexdata),
        "bytes": int(model.nbuffer),
        "body_names": [model.body(i).name for i in range(model.nbody)],
        "joint_names": [model.joint(i).name for i in range(model.njnt)],
        "floating": bool(_free_joints(model)),
        "serial_dofs": serial_dofs(model),
    }


def serial_dofs(model: mujoco.MjModel) -> int:
    """Joint DoF (a free joint's left out) along the robot's chain from its root to the
    first body where the moving tree branches: 6–7 for an arm, 0–2 for a hand."""
    free = {int(model.jnt_bodyid[j]) for j in _free_joints(model)}
    own = [0 if b in free else int(model.body_dofnum[b]) for b in range(model.nbody)]
    moving = list(own)  # DoF in each body's subtree
    for body in range(model.nbody - 1, 0, -1):
        moving[int(model.body_parentid[body])] += moving[body]
    children: dict[int, list[int]] = {}
    for body in range(1, model.nbody):
        children.setdefault(int(model.body_parentid[body]), []).append(body)
    total, body = 0, 0
    while True:
        branches = [c for c in children.get(body, []) if moving[c] > 0]
        if len(branches) != 1:
            return total
        body = branches[0]
        total += own[body]


def main() -> None:
    request = json.loads(sys.stdin.read())
    memory = int(request["memory_bytes"])
    from posekit.robots.confinement import confine
    from posekit.robots.step_cost import step_ms

    confined = confine([Path(folder) for folder in request.get("read", [])])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    try:
        model = compile_model(
            request["kind"], request["path"], request.get("xml"), bool(request.get("floating"))
        )
        stats = model_stats(model)
        if request.get("step_budget_ms"):
            stats["step_ms"] = step_ms(model, give_up_ms=4 * float(request["step_budget_ms"]))
        reply: dict[str, Any] = {"ok": True, "stats": stats, "confined": confined}
    except MemoryError:
        reply = {"ok": False, "error": f"compiling it needs more than {memory >> 20} MiB"}
    except Exception as exc:
        reply = {"ok": False, "error": str(exc)}
    sys.stdout.write(json.dumps(reply))


if __name__ == "__main__":
    main()
