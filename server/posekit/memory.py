"""The process's heap: fewer malloc arenas, and freed memory handed back to the OS (glibc).

Compiling a robot model allocates and frees hundreds of MB. glibc keeps what is freed in
its free lists, and gives every thread that allocates its own arena (up to eight per
core), each holding on to its own free pages; the resident size of a process that
compiled a few large robots would then never come down after they are released. posekit
limits the arenas to ``ARENAS`` per process and trims the heap after releasing models.
Elsewhere than glibc both are no-ops.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any

ARENAS = 2
_M_ARENA_MAX = -8  # mallopt parameter (glibc malloc.h)


def _libc() -> Any:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") else None


_LIBC = _libc()


def limit_malloc_arenas(arenas: int = ARENAS) -> None:
    """Let threads share at most ``arenas`` malloc arenas; call it before threads start."""
    if _LIBC is not None:
        _LIBC.mallopt(_M_ARENA_MAX, arenas)


def release_freed_memory() -> None:
    """Return the heap's free pages to the operating system (``malloc_trim(0)``)."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)
