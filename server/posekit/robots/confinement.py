"""Confining a child process's file access to a few folders, by the kernel.

The children that read a stranger's upload (:mod:`~posekit.robots.compile_worker`,
:mod:`~posekit.robots.mesh_worker`) call :func:`confine` once their imports are done:
from then on the kernel (Linux Landlock, through the ``landlock`` package) refuses them
every file outside the folders they were given, however MuJoCo or a mesh parser
resolves a path — a nested include, a ``meshdir``, ``..``, a symlink or an absolute
path all end in "permission denied". The server's own path checks
(:mod:`~posekit.robots.references`) come first and give the clearer message; this is
what holds when they miss a case.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path


def runtime_folders() -> list[Path]:
    """Where the child's Python, its packages and posekit itself live (read-only: a
    module imported late, a MuJoCo plugin)."""
    import posekit

    folders = {Path(sys.prefix), Path(sys.base_prefix), Path(posekit.__file__).parents[1]}
    return sorted(folder.resolve() for folder in folders if folder.is_dir())


def confine(read: Iterable[Path], write: Iterable[Path] = ()) -> bool:
    """From now on, this process may read only beneath ``read`` (and
    :func:`runtime_folders`) and write only beneath ``write``; True when the kernel
    enforces it, False where it cannot (no Landlock: an older kernel, another OS, a
    seccomp profile without its calls). A folder that does not exist is left out (a
    mesh cache not made yet): there is nothing in it to read."""
    try:
        from landlock import FSAccess, LandlockError, Ruleset
    except ImportError:
        return False
    try:
        ruleset = Ruleset()
        reading = FSAccess.READ_FILE | FSAccess.READ_DIR | FSAccess.EXECUTE
        ruleset.allow(*[f for f in [*read, *runtime_folders()] if f.exists()], rules=reading)
        for folder in write:
            if folder.exists():
                ruleset.allow(folder, rules=FSAccess.all())
        ruleset.apply()
    except (OSError, LandlockError):
        return False
    return True
