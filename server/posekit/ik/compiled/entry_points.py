"""Compiled kernels called without Numba's type dispatch, for arguments of known types.

Calling a Numba dispatcher (``kernel(a, b)``) types every argument, selects the
overload that fits and then calls it; typing and selection cost about a thousand
machine instructions per call, several times a step. :func:`direct` returns the
overload's own entry point for one signature (loaded from the on-disk cache, or
compiled, once): the same machine code, called with the arguments unboxed as that
signature says and nothing checked. Only for arguments whose types are guaranteed by
construction (arrays a plan allocated itself): an array of another dtype, rank or
layout would be misread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from numba.core import sigutils
from numba.core.dispatcher import Dispatcher


def direct(kernel: Dispatcher, signature: str) -> Callable[..., Any]:
    """The entry point of ``kernel``'s overload for ``signature`` (e.g.
    ``"int64(int64[::1], float64[::1])"``), compiled or loaded on first use."""
    arguments, _ = sigutils.normalize_signature(signature)
    existing = kernel.overloads.get(tuple(arguments))
    if existing is not None:  # e.g. compiled eagerly, from a signature given to ``njit``
        entry: Callable[..., Any] = existing.entry_point  # type: ignore[attr-defined]
        return entry
    return kernel.compile(signature)
