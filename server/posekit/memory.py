"""The process's heap: fewer malloc arenas, and freed memory handed back to the OS (glibc).

Compiling a robot model allocates and frees hundreds of MB, and every session holds
about a megabyte in each process (its MjData, the plan's arrays, its states, its
client's buffers) that is freed when it ends. glibc keeps what is freed in its free
lists, and gives every thread that allocates its own arena (up to eight per core), each
holding on to its own free pages; the resident size of a process that compiled a few
large robots, or served a few thousand sessions, would then never come down after they
are released (800 arm7 sessions streamed and deleted, four times over, left each
process at 1.3 GB, of which 1 GB was free). posekit limits the arenas to ``ARENAS`` per
process, and whatever releases a model or ends a session notes it (:func:`note_freed`),
so that the process's next periodic :func:`release_noted` (about once a second) trims
the heap. Elsewhere than glibc both are no-ops.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
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


_freed = threading.Event()  # the heap is the process's: so is this


def note_freed() -> None:
    """Memory worth giving back was freed (a model released, a session ended): the
    process's next :func:`release_noted` trims the heap."""
    _freed.set()


def release_noted() -> bool:
    """Trim the heap (:func:`release_freed_memory`) when :func:`note_freed` was called
    since the last trim; whether it did. Called now and then (each process's model
    expiry, about once a second): a trim costs a walk of the heap, so it is not made at
    every release."""
    if not _freed.is_set():
        return False
    _freed.clear()
    release_freed_memory()
    return True
