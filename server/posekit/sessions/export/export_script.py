"""Export what was tuned: a session as a runnable Python script, or its pose as a keyframe.

:func:`python_script` writes a script on the posekit engine API (mink's: ``import
posekit as mink`` works) that loads the same model — a built-in one from the installed
``posekit.models`` package, a Menagerie one through ``mujoco_menagerie`` (which reads
``MENAGERIE_ROOT`` when set), any other (a robot from a folder, a file or an upload) from
the compiled model itself, embedded in the script as MuJoCo's binary model (MJB,
zlib-compressed, base64; it loads with the same MuJoCo version) — builds the same tasks, targets, weights and limits
(:mod:`posekit.sessions.export.export_code`), starts from the session's ``q`` and steps
exactly as a session does (:func:`posekit.sessions.live.step.solve_step`):

.. math:: v = \\text{solve\\_ik}(\\dots), \\quad \\text{park if } \\max_i |v_i|\\,dt <
          \\text{tolerance}, \\text{ else } q \\leftarrow q \\oplus v\\,dt

Every number is written with ``repr`` (exact round trip), so from the same ``q`` the
script and the session take the same steps. :func:`keyframe_line` is the session's
``q`` as an MJCF ``<key>`` element.
"""

from __future__ import annotations

import base64
import importlib.resources
import string
import zlib
from typing import NamedTuple
from xml.sax.saxutils import quoteattr

import mujoco
import numpy as np

from posekit.ik.tasks import Task
from posekit.sessions.export.export_code import Code, block, limit_code, literal, task_code
from posekit.sessions.kinds import task_kind
from posekit.sessions.specs.session_spec import SessionSpec

TEMPLATE = string.Template('''\
"""posekit session $session_id on $robot ($entry), exported as a script.

Rebuilds the session's tasks, targets, weights, limits and solver settings with the
posekit engine API (mink's API: ``import posekit as mink`` works) and, from the
session's configuration, solves exactly as the session does. Needs
``pip install $needs``.

    python $filename             # step until the session would park
    python $filename --steps 50  # exactly 50 steps

prints the final configuration and the task errors as JSON.
"""

import argparse
import json

import mujoco
import numpy as np

import posekit
$model_import

model = $model_expression

# The session's configuration (nq = $nq).
configuration = posekit.Configuration(model, q=$q)

# How the session solves.
SOLVER = $solver
DT = $dt  # [s]
DAMPING = $damping  # added to the QP Hessian's diagonal
TOLERANCE = $tolerance  # [rad or m]: a step that moves no joint further is a fixed point

# Tasks, in the session's order.
tasks = {}
$tasks

# Limits.
limits = {}
$limits

objectives = [$objectives]
constraints = [$constraints]  # hard equalities J dq = -gain e
active_limits = [$active_limits]


def step() -> bool:
    """One step as the session takes it; False at a fixed point (q unchanged)."""
    velocity = posekit.solve_ik(
        configuration, objectives, DT, SOLVER, damping=DAMPING,
        limits=active_limits, constraints=constraints or None,
    )
    if not np.all(np.isfinite(velocity)):
        raise RuntimeError("the QP solution is not finite")
    if max(map(abs, velocity.tolist()), default=0.0) * DT < TOLERANCE:
        return False  # every task met, or the best compromise between them
    configuration.integrate_inplace(velocity, DT)
    return True


def task_errors() -> dict[str, float]:
    """Norm of each task's error at the current configuration [m, rad or unitless]."""
    return {
        name: float(np.linalg.norm(task.compute_error(configuration)))
        for name, task in tasks.items()
        if isinstance(task, posekit.Task)
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Solve the exported posekit session.")
    parser.add_argument("--steps", type=int, help="steps to take (default: until parked)")
    arguments = parser.parse_args()
    steps, parked = 0, False
    while steps < (arguments.steps if arguments.steps is not None else 100_000):
        parked = not step()
        steps += 1
        if parked and arguments.steps is None:
            break
    print(json.dumps({"q": configuration.q.tolist(), "steps": steps, "parked": parked,
                      "errors": task_errors()}))


if __name__ == "__main__":
    main()
''')


def is_builtin(robot: str) -> bool:
    """Whether ``robot`` is a model of the installed ``posekit.models`` package."""
    return importlib.resources.files("posekit.models").joinpath(f"{robot}.xml").is_file()


def is_menagerie(robot: str) -> bool:
    """Whether ``robot`` is named in the installed ``mujoco_menagerie`` package's list."""
    import mujoco_menagerie

    try:
        mujoco_menagerie.get(robot)
    except mujoco_menagerie.MenagerieError:  # UnknownRobotError: not one of its robots
        return False
    return True


class ModelLoader(NamedTuple):
    """How a script gets the robot's model: what to install, import and evaluate."""

    needs: str  # the pip requirements, e.g. ``posekit mujoco-menagerie``
    imports: str
    expression: str


def model_loader(robot: str, entry: str | None, model: mujoco.MjModel) -> ModelLoader:
    """How a script loads the robot's model: a built-in one from posekit, a Menagerie one
    by name (the script then needs ``mujoco-menagerie`` too, and says so when it is
    missing), any other from its compiled model embedded in the script."""
    if is_builtin(robot):
        return ModelLoader(
            "posekit", "from posekit.demo import builtin_model", f"builtin_model({literal(robot)})"
        )
    if is_menagerie(robot):
        robot_xml = f"mujoco_menagerie.get({literal(robot)}).xml({literal(entry)})"
        imports = (
            "try:\n"
            "    import mujoco_menagerie  # reads MENAGERIE_ROOT when set, else downloads once\n"
            "except ModuleNotFoundError:\n"
            f'    raise SystemExit("This script loads {robot} from MuJoCo Menagerie: '
            'pip install mujoco-menagerie") from None'
        )
        expression = f"mujoco.MjModel.from_xml_path(str({robot_xml}))"
        return ModelLoader("posekit mujoco-menagerie", imports, expression)
    return ModelLoader("posekit", "import base64\nimport zlib", embedded_model(model))


def embedded_model(model: mujoco.MjModel) -> str:
    """An expression that rebuilds ``model`` from its MJB bytes, compressed, as text."""
    buffer = np.zeros(mujoco.mj_sizeModel(model), dtype=np.uint8)
    mujoco.mj_saveModel(model, None, buffer)
    text = base64.b64encode(zlib.compress(buffer.tobytes(), 9)).decode()
    lines = "\n".join(f"    {text[i : i + 88]!r}" for i in range(0, len(text), 88))
    return (
        "mujoco.MjModel.from_binary_path(\n"
        f'    "model.mjb",  # the compiled model, embedded (MuJoCo {mujoco.__version__})\n'
        '    {"model.mjb": zlib.decompress(base64.b64decode(\n'
        f"{lines}\n"
        "    ))},\n)"
    )


def _statements(table: str, name: str, code: Code, disabled: bool) -> str:
    """``table["name"] = …`` and the calls that finish it, commented."""
    var = f"{table}[{literal(name)}]"
    notes = [
        note for note in (code.comment, "disabled in the session" if disabled else None) if note
    ]
    lines = [f"# {name}: {'; '.join(notes)}"] if notes else []
    lines.append(code.construct.render(f"{var} = "))
    lines.extend(method.render(f"{var}.") for method in code.then)
    return "\n".join(lines)


def _names(table: str, names: list[str]) -> str:
    return ", ".join(f"{table}[{literal(name)}]" for name in names)


def python_script(spec: SessionSpec, model: mujoco.MjModel, session_id: str) -> str:
    """A runnable script that rebuilds and solves the session of ``spec`` (module doc).

    ``spec`` is the session's canonical spec (:meth:`Session.spec`), ``model`` its model.
    """
    tasks: list[str] = []
    objectives: list[str] = []
    constraints: list[str] = []
    for task in spec.tasks:
        name = task.name or task.type
        tasks.append(_statements("tasks", name, task_code(task, model), not task.enabled))
        if not task.enabled:
            continue
        engine = task_kind(task).build(task, model, spec.solver.step_dt)
        hard = task.role == "constraint" and isinstance(engine, Task)  # as the session plans
        (constraints if hard else objectives).append(name)
    limits = [
        _statements("limits", limit.name or limit.type, limit_code(limit), not limit.enabled)
        for limit in spec.limits
    ]
    active = [limit.name or limit.type for limit in spec.limits if limit.enabled]
    loader = model_loader(spec.robot, spec.entry, model)
    q = block(np.array(spec.q), "")
    return TEMPLATE.substitute(
        session_id=session_id,
        robot=spec.robot,
        entry=spec.entry,
        filename=f"posekit_{session_id}.py",
        needs=loader.needs,
        model_import=loader.imports,
        model_expression=loader.expression,
        nq=model.nq,
        q=q,
        solver=literal(spec.solver.solver),
        dt=literal(spec.solver.step_dt),
        damping=literal(spec.solver.damping),
        tolerance=literal(spec.solver.tolerance),
        tasks="\n".join(tasks),
        limits="\n".join(limits),
        objectives=_names("tasks", objectives),
        constraints=_names("tasks", constraints),
        active_limits=_names("limits", active),
    )


def keyframe_line(q: list[float], name: str = "posekit") -> str:
    """The configuration as an MJCF keyframe: ``<key name="…" qpos="…"/>`` (exact floats)."""
    return f"<key name={quoteattr(name)} qpos={quoteattr(' '.join(repr(v) for v in q))}/>"
