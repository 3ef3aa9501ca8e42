"""From a robot's files to what MuJoCo compiles, and the compiled model.

A :class:`ModelSource` is an entry point made ready for MuJoCo: an MJCF file as it is
(its references checked to stay inside the upload, for uploads), or a URDF rewritten
by :mod:`posekit.robots.urdf`; with the files it reads (what the live-reload watcher
watches) and notes for users. Errors name files relative to the robot's folder, never
by a server path.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from posekit.robots.compile_worker import compile_model
from posekit.robots.errors import RobotFileInvalid
from posekit.robots.local_robots import LocalRobot
from posekit.robots.references import (
    check_confined,
    mjcf_references,
    model_kind,
    parse_xml,
    shown,
)
from posekit.robots.urdf import urdf_source


@dataclass(frozen=True)
class ModelSource:
    """What MuJoCo compiles for one entry point of a robot from files.

    Attributes:
        kind: ``mjcf`` or ``urdf``.
        path: The entry point's file.
        xml: The rewritten XML (URDF), or None to compile ``path`` as it is (MJCF).
        root: The robot's folder (messages name files relative to it).
        files: Every file it reads (or may read), for watching.
        notes: What was changed or left out, for users (URDF).
        floating: The URDF's root gets a free joint.
    """

    kind: str
    path: Path
    xml: str | None
    root: Path
    files: frozenset[Path]
    notes: tuple[str, ...] = ()
    floating: bool = False


def model_source(robot: LocalRobot, entry: str) -> ModelSource:
    """The :class:`ModelSource` of one entry point; :class:`RobotFileInvalid` when its
    XML is malformed or (uploads) a reference leaves the upload."""
    path, root = robot.file(entry), robot.root
    kind = model_kind(path)
    if kind is None:
        element = parse_xml(path, root)  # raises when malformed
        raise RobotFileInvalid(
            f"{shown(path, root)}: neither MJCF (<mujoco>) nor URDF (<robot>), but <{element.tag}>"
        )
    if kind == "urdf":
        urdf = urdf_source(path, root, robot.confined)
        read, notes = frozenset(urdf.files), tuple(urdf.notes)
        return ModelSource(kind, path, urdf.xml, root, read, notes, urdf.floating)
    references = mjcf_references(path, root if robot.confined else None)
    if robot.confined:
        check_confined(references, root)
    files = {path, *(candidate for ref in references for candidate in ref.candidates)}
    return ModelSource(kind, path, None, root, frozenset(files))


def redact(message: str, root: Path) -> str:
    """MuJoCo's ``message`` with the robot's folder cut from paths (relative names)."""
    for prefix in {str(root), str(root.resolve())}:
        message = message.replace(prefix + "/", "").replace(prefix, ".")
    return message


def compile_source(source: ModelSource) -> mujoco.MjModel:
    """Compile in this process (:func:`~posekit.robots.compile_worker.compile_model`);
    :class:`RobotFileInvalid` with MuJoCo's message, paths relative to the robot."""
    try:
        return compile_model(source.kind, str(source.path), source.xml, source.floating)
    except Exception as exc:
        raise RobotFileInvalid(
            f"MuJoCo could not compile {shown(source.path, source.root)}: "
            f"{redact(str(exc), source.root)}"
        ) from None


def model_digest(model: mujoco.MjModel) -> str:
    """A digest of everything a compiled model holds: equal digests, equal models."""
    buffer = np.empty(mujoco.mj_sizeModel(model), dtype=np.uint8)
    mujoco.mj_saveModel(model, None, buffer)
    return hashlib.sha256(buffer.tobytes()).hexdigest()
