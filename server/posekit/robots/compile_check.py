"""Compile an untrusted model in a short-lived child process, with limits.

The child (:mod:`posekit.robots.compile_worker`, run as ``python -I``) gets at most
``COMPILE_MEMORY_BYTES`` of address space and ``timeout_s`` seconds, and may read
nothing but the upload and its converted meshes (:mod:`posekit.robots.confinement`): a model that
makes MuJoCo loop, allocate without end or crash costs the server nothing but that
child. Its answer — MuJoCo's error, or the model's sizes and the cost of an IK step —
is checked here against the caps (:class:`ModelCaps`).
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from posekit.robots import compile_worker
from posekit.robots.child_process import ChildStopped, ChildTimedOut, ask_child
from posekit.robots.errors import RobotFileInvalid, UploadTooLarge
from posekit.robots.loading import ModelSource, redact
from posekit.robots.mesh_convert import cache_dir
from posekit.robots.references import shown

COMPILE_MEMORY_BYTES = 2 << 30  # [B] address space of the compiling child
WORKER = Path(compile_worker.__file__)


@dataclass(frozen=True)
class ModelCaps:
    """What one uploaded model may hold, at most."""

    bodies: int = 1000
    geoms: int = 10_000
    mesh_vertices: int = 2_000_000
    dofs: int = 256
    """Joint DoF (nv): a step's cost grows with them (a 6,000-DoF upload stepped in 14 s)."""
    hfield_samples: int = 4_000_000
    """Height-field samples of all height fields (a 10000² one is 400 MB in a 249-byte file)."""
    texture_bytes: int = 64 << 20
    """Texture bytes of all textures (an 8000² PNG in a 1 kB zip is 190 MB)."""
    step_ms: float = 10.0
    """[ms] an IK step of the default preset (:mod:`~posekit.robots.step_cost`): a
    session's step holds the server's event loop (a 256-DoF chain steps in 23 ms, G1 in
    0.02 ms); 0 = not timed."""

    def check(self, stats: dict[str, Any], name: str) -> None:
        """:class:`UploadTooLarge` naming the first size over its cap and its setting."""
        for key, cap, what in (
            ("bodies", self.bodies, "bodies"),
            ("geoms", self.geoms, "geoms"),
            ("mesh_vertices", self.mesh_vertices, "mesh vertices"),
            ("dofs", self.dofs, "joint DoF"),
            ("hfield_samples", self.hfield_samples, "height-field samples"),
            ("texture_bytes", self.texture_bytes, "bytes of textures"),
        ):
            if int(stats[key]) > cap:
                raise UploadTooLarge(
                    f"{name} has {stats[key]} {what}; an uploaded robot may have at most {cap} "
                    f"(POSEKIT_ROBOT_MAX_{key.upper()})"
                )
        if self.step_ms and float(stats.get("step_ms", 0.0)) > self.step_ms:
            raise UploadTooLarge(
                f"an IK step of {name}'s default tasks takes {stats['step_ms']:.1f} ms; an "
                f"uploaded robot's step may take at most {self.step_ms:g} ms "
                "(POSEKIT_MAX_STEP_MS): a session's step holds every other session's answers"
            )


def check_compiles(source: ModelSource, caps: ModelCaps, timeout_s: float) -> dict[str, Any]:
    """Compile ``source`` in a child process; its stats when it compiles within the
    limits, else :class:`RobotFileInvalid` (MuJoCo's message, paths relative to the
    upload) or :class:`UploadTooLarge`."""
    name = shown(source.path, source.root)
    request = {
        "kind": source.kind,
        "path": str(source.path),
        "xml": source.xml,
        "floating": source.floating,
        "memory_bytes": COMPILE_MEMORY_BYTES,
        "read": [str(source.root), str(cache_dir())],  # the upload, its converted meshes
        "step_budget_ms": caps.step_ms,
    }
    try:
        reply = ask_child(WORKER, request, timeout_s, cwd=source.root)
    except ChildTimedOut:
        raise RobotFileInvalid(f"MuJoCo did not compile {name} within {timeout_s:g} s") from None
    except ChildStopped as stopped:
        raise RobotFileInvalid(
            f"MuJoCo could not compile {name}: the compiler stopped (exit code "
            f"{stopped.returncode}; out of memory or a crash)"
        ) from None
    if not reply.get("ok"):
        message = redact(str(reply.get("error", "unknown error")), source.root)
        raise RobotFileInvalid(f"MuJoCo could not compile {name}: {message}")
    if not reply.get("confined"):
        _warn_unconfined()
    stats: dict[str, Any] = reply["stats"]
    caps.check(stats, name)
    return stats


@functools.cache
def _warn_unconfined() -> None:
    logging.getLogger(__name__).warning(
        "uploads are compiled without kernel confinement (no Linux Landlock here): only "
        "posekit's path checks keep them from reading files outside the upload"
    )
