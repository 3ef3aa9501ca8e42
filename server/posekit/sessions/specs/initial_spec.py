"""What a new session starts from: a robot's default keyframe, preset and limits, or a
full portable spec."""

from __future__ import annotations

import mujoco

from posekit.ik.exceptions import InvalidKeyframe
from posekit.robots import DEFAULT_ROBOT, RobotRegistry, default_limits, default_preset
from posekit.robots.naming import default_keyframe
from posekit.sessions.specs.session_spec import CreateSession, RestoreSession, SessionSpec
from posekit.sessions.specs.solver_settings import SolverSettings


def initial_spec(
    registry: RobotRegistry, request: CreateSession
) -> tuple[SessionSpec, mujoco.MjModel, str]:
    """The spec, compiled model and entry point of a session created by ``request``.

    Loading a Menagerie robot the first time may download it (call from a worker thread).
    """
    if isinstance(request, RestoreSession):
        spec = request.spec
        if request.solver is not None:
            spec = spec.model_copy(update={"solver": request.solver.apply_to(spec.solver)})
        entry = registry.resolve_entry(spec.robot, spec.entry)
        return spec, registry.model(spec.robot, entry), entry
    robot = request.robot or DEFAULT_ROBOT
    entry = registry.resolve_entry(robot, request.entry)
    model = registry.model(robot, entry)
    keyframe = request.keyframe or default_keyframe(model)
    if keyframe is None:
        q = model.qpos0.tolist()
    else:
        key_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, keyframe)
        if key_id < 0:
            raise InvalidKeyframe(keyframe, model)
        q = model.key_qpos[key_id].tolist()
    solver = SolverSettings()
    if request.solver is not None:
        solver = request.solver.apply_to(solver)
    spec = SessionSpec.model_validate(
        {
            "robot": robot,
            "entry": entry,
            "q": q,
            "tasks": default_preset(model) if request.preset else [],
            "limits": default_limits(model),
            "solver": solver.model_dump(),
        }
    )
    return spec, model, entry
