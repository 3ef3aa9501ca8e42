"""Compile one robot model with MuJoCo: in this process, or as a short-lived child.

:func:`compile_model` is how every robot from files is compiled (through
:class:`mujoco.MjSpec`; a URDF gets a ``home`` keyframe). Run as a script
(``python -I compile_worker.py``, which imports nothing of posekit: it starts in well
under a second) it reads one request as JSON on stdin, ``{"path", "xml", "kind",
"memory_bytes"}``, limits its own address space and CPU time, compiles, and prints
``{"ok": true, "stats": {…}}`` or ``{"ok": false, "error": "…"}``: the upload check of
:mod:`posekit.robots.compile_check`, so that a pathological model cannot wedge or
exhaust the server.
"""

from __future__ import annotations

import json
import resource
import sys
from typing import Any

import mujoco
import numpy as np

HOME_KEYFRAME = "home"


def add_home_keyframe(spec: mujoco.MjSpec, model: mujoco.MjModel) -> bool:
    """Add keyframe ``home`` unless the model has one: ``qpos0`` with every limited hinge
    or slide joint moved into its range. Whether it was added."""
    if any(key.name == HOME_KEYFRAME for key in spec.keys):
        return False
    q = model.qpos0.copy()
    for joint in range(model.njnt):
        kind = int(model.jnt_type[joint])
        if model.jnt_limited[joint] and kind in (
            int(mujoco.mjtJoint.mjJNT_HINGE),
            int(mujoco.mjtJoint.mjJNT_SLIDE),
        ):
            adr = int(model.jnt_qposadr[joint])
            low, high = model.jnt_range[joint]
            q[adr] = float(np.clip(q[adr], low, high))
    spec.add_key(name=HOME_KEYFRAME, qpos=q.tolist())
    return True


def compile_model(kind: str, path: str, xml: str | None) -> mujoco.MjModel:
    """Compile an MJCF file (``xml`` None) or URDF text rewritten for MuJoCo."""
    spec = mujoco.MjSpec.from_file(path) if xml is None else mujoco.MjSpec.from_string(xml)
    model = spec.compile()
    if kind == "urdf" and add_home_keyframe(spec, model):
        model = spec.compile()
    return model


def model_stats(model: mujoco.MjModel) -> dict[str, Any]:
    """Sizes a cap is checked against, and names to guess the robot's category from."""
    free = int(mujoco.mjtJoint.mjJNT_FREE)
    return {
        "bodies": int(model.nbody),
        "geoms": int(model.ngeom),
        "mesh_vertices": int(model.nmeshvert),
        "bytes": int(model.nbuffer),
        "body_names": [model.body(i).name for i in range(model.nbody)],
        "joint_names": [model.joint(i).name for i in range(model.njnt)],
        "floating": any(int(t) == free for t in model.jnt_type),
    }


def main() -> None:
    request = json.loads(sys.stdin.read())
    memory = int(request["memory_bytes"])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    try:
        model = compile_model(request["kind"], request["path"], request.get("xml"))
        reply: dict[str, Any] = {"ok": True, "stats": model_stats(model)}
    except MemoryError:
        reply = {"ok": False, "error": f"compiling it needs more than {memory >> 20} MiB"}
    except Exception as exc:
        reply = {"ok": False, "error": str(exc)}
    sys.stdout.write(json.dumps(reply))


if __name__ == "__main__":
    main()
