"""The C functions a compiled step calls, found in the installed ``mujoco`` and ``daqp``.

The ``mujoco`` wheel ships ``libmujoco`` next to its Python modules and the ``daqp``
wheel's extension module exports daqp's C API (``daqp_quadprog``,
``daqp_default_settings``, …). Opening them again with :mod:`ctypes` returns the
libraries the Python modules already loaded, so the addresses below are the very
functions ``mujoco.mj_kinematics`` and ``daqp.solve`` run.

daqp's structs are laid out by hand in :mod:`posekit.ik.compiled.daqp_call`; their
layout has not changed from daqp 0.7 to 0.11, the versions this path accepts.
Anything else (another daqp, no ``libmujoco`` file) makes the compiled path
unavailable, with the reason, and ``solve_ik`` uses the Python path.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.metadata
from dataclasses import dataclass
from pathlib import Path

import daqp
import mujoco
import numpy as np

MUJOCO_FUNCTIONS: tuple[str, ...] = (
    "mj_kinematics",
    "mj_comPos",
    "mj_jacBody",
    "mj_jacGeom",
    "mj_jacSite",
    "mj_jac",
    "mj_jacSubtreeCom",
    "mj_differentiatePos",
    "mj_integratePos",
    "mj_geomDistance",
    "mj_crb",
    "mj_fullM",
    "mj_tendon",
    "mj_makeConstraint",
    "mju_mat2Quat",
    "mju_quat2Mat",
    "mju_normalize3",
)
# Slots of the function table (the order of MUJOCO_FUNCTIONS, then daqp's).
FN_KINEMATICS = 0
FN_COM_POS = 1
FN_JAC_BODY = 2
FN_JAC_GEOM = 3
FN_JAC_SITE = 4
FN_JAC = 5
FN_JAC_SUBTREE_COM = 6
FN_DIFFERENTIATE_POS = 7
FN_INTEGRATE_POS = 8
FN_GEOM_DISTANCE = 9
FN_CRB = 10
FN_FULL_M = 11
FN_TENDON = 12
FN_MAKE_CONSTRAINT = 13
FN_MAT2QUAT = 14
FN_QUAT2MAT = 15
FN_NORMALIZE3 = 16
FN_DAQP_QUADPROG = 17
FUNCTION_COUNT = 18

DAQP_VERSIONS = ((0, 7), (0, 12))
"""daqp versions ``[low, high)`` whose ``DAQPProblem`` and ``DAQPResult`` layouts are known."""

_LIBRARY_PATTERNS = ("libmujoco.so*", "libmujoco*.dylib", "mujoco.dll")


class CompiledUnavailable(RuntimeError):
    """The compiled path cannot run in this installation; the message says why."""


@dataclass(frozen=True)
class NativeLibraries:
    """Addresses of the C functions (``functions[FN_*]``) and daqp's default settings."""

    functions: np.ndarray
    daqp_settings: bytes
    """A ``DAQPSettings`` filled by ``daqp_default_settings`` (what ``daqp.solve`` uses)."""


def _address(library: ctypes.CDLL, name: str) -> int:
    try:
        function = getattr(library, name)
    except AttributeError:
        raise CompiledUnavailable(f"{library._name} does not export {name}") from None
    address = ctypes.cast(function, ctypes.c_void_p).value
    if not address:
        raise CompiledUnavailable(f"{name} has no address in {library._name}")
    return int(address)


def _mujoco_library() -> ctypes.CDLL:
    folder = Path(mujoco.__file__).parent
    for pattern in _LIBRARY_PATTERNS:
        for path in sorted(folder.glob(pattern)):
            return ctypes.CDLL(str(path))
    raise CompiledUnavailable(f"no libmujoco found next to the mujoco package in {folder}")


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for part in text.split(".")[:2]:
        digits = "".join(c for c in part if c.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def _daqp_library() -> ctypes.CDLL:
    version = importlib.metadata.version("daqp")
    low, high = DAQP_VERSIONS
    if not low <= _version_tuple(version) < high:
        raise CompiledUnavailable(
            f"daqp {version} is installed; the compiled path knows daqp's C structs for "
            f"versions {low[0]}.{low[1]} to below {high[0]}.{high[1]}"
        )
    return ctypes.CDLL(str(daqp.__file__))


def resolve_native_libraries() -> NativeLibraries:
    """Open the libraries and look the functions up (uncached; see :func:`native_libraries`).

    Raises:
        CompiledUnavailable: as :func:`native_libraries`.
    """
    mujoco_library = _mujoco_library()
    daqp_library = _daqp_library()
    addresses = [_address(mujoco_library, name) for name in MUJOCO_FUNCTIONS]
    addresses.append(_address(daqp_library, "daqp_quadprog"))
    assert len(addresses) == FUNCTION_COUNT
    settings = ctypes.create_string_buffer(512)  # DAQPSettings is 136 bytes in 0.11
    daqp_library.daqp_default_settings.restype = None
    daqp_library.daqp_default_settings(settings)
    return NativeLibraries(np.array(addresses, dtype=np.int64), settings.raw)


@functools.cache
def _resolved() -> NativeLibraries | str:
    try:
        return resolve_native_libraries()
    except (CompiledUnavailable, OSError, importlib.metadata.PackageNotFoundError) as exc:
        return str(exc)


def native_libraries() -> NativeLibraries:
    """The function table, resolved once per process.

    Raises:
        CompiledUnavailable: a library or a function is missing, or daqp's version is
            not one whose structs this module knows.
    """
    resolved = _resolved()
    if isinstance(resolved, str):
        raise CompiledUnavailable(resolved)
    return resolved


def availability() -> str | None:
    """``None`` when the compiled path can run here, else the reason it cannot."""
    resolved = _resolved()
    return resolved if isinstance(resolved, str) else None
