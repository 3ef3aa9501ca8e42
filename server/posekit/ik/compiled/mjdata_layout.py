"""Byte offsets of the ``mjData`` fields a compiled step reads through the struct itself.

Most buffers of ``mjData`` (``qpos``, ``xpos``, …) never move, and the plan records
their addresses once. The constraint rows do move: ``mj_makeConstraint`` allocates
``efc_*`` from the arena on every call, so the kernel reads the current pointers (and
``nefc``) from the struct. Their offsets come from MuJoCo's own description of its
structs (``mujoco.introspect``), laid out with :mod:`ctypes` under the C rules, and are
checked against the Python bindings' views before use: a mismatch makes
:func:`efc_offsets` report why, and equality tasks then take the Python path.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

import mujoco
import numpy as np

CTYPES_OF: dict[str, Any] = {
    "mjtNum": ctypes.c_double,
    "mjtSize": ctypes.c_int64,
    "mjtByte": ctypes.c_ubyte,
    "mjtBool": ctypes.c_bool,
    "int": ctypes.c_int,
    "unsigned int": ctypes.c_uint,
    "size_t": ctypes.c_size_t,
    "uintptr_t": ctypes.c_size_t,
    "uint64_t": ctypes.c_uint64,
    "int64_t": ctypes.c_int64,
}
"""C scalar types of MuJoCo's headers as ctypes types."""

EFC_FIELDS: tuple[str, ...] = (
    "nefc",
    "efc_type",
    "efc_id",
    "efc_pos",
    "efc_J",
    "efc_J_rownnz",
    "efc_J_rowadr",
    "efc_J_colind",
)
"""The fields, in the order of :func:`efc_offsets`' array."""


def _ctype(declaration: Any, structs: dict[str, Any]) -> Any:
    """The :mod:`ctypes` type of an introspected C type."""
    from mujoco.introspect import ast_nodes

    if isinstance(declaration, ast_nodes.PointerType):
        return ctypes.c_void_p
    if isinstance(declaration, ast_nodes.ArrayType):
        inner = _ctype(declaration.inner_type, structs)
        for extent in reversed(declaration.extents):
            inner = inner * int(extent)
        return inner
    if isinstance(declaration, ast_nodes.ValueType):
        if declaration.name in CTYPES_OF:
            return CTYPES_OF[declaration.name]
        if declaration.name in structs:
            return _structure(declaration.name, structs)
    raise TypeError(f"no ctypes equivalent for {declaration!r}")


@functools.cache
def _structure_cached(name: str) -> Any:
    from mujoco.introspect import structs

    return _structure(name, structs.STRUCTS)


def _structure(name: str, structs: dict[str, Any]) -> Any:
    fields = [(field.name, _ctype(field.type, structs)) for field in structs[name].fields]
    return type(name, (ctypes.Structure,), {"_fields_": fields})


def _pointer_at(data: mujoco.MjData, offset: int) -> int:
    return int(ctypes.c_void_p.from_address(data._address + offset).value or 0)


def _verify(layout: Any, data: mujoco.MjData, model: mujoco.MjModel) -> str | None:
    """Compare offsets with the bindings' views on a scratch ``mjData``; None when right."""
    for name in ("qpos", "xpos", "geom_xmat", "subtree_com"):
        if _pointer_at(data, getattr(layout, name).offset) != getattr(data, name).ctypes.data:
            return f"mjData.{name} is not where MuJoCo's struct description puts it"
    mujoco.mj_kinematics(model, data)
    mujoco.mj_comPos(model, data)
    mujoco.mj_makeConstraint(model, data)
    if ctypes.c_int.from_address(data._address + layout.nefc.offset).value != data.nefc:
        return "mjData.nefc is not where MuJoCo's struct description puts it"
    for name in ("efc_type", "efc_pos", "efc_J"):
        if _pointer_at(data, getattr(layout, name).offset) != getattr(data, name).ctypes.data:
            return f"mjData.{name} is not where MuJoCo's struct description puts it"
    return None


_PROBE_XML = """
<mujoco><worldbody>
  <body name="a"><joint name="ja" type="hinge" range="-1 1"/><geom size="0.1"/></body>
  <body name="b"><joint name="jb" type="hinge"/><geom size="0.1"/></body>
</worldbody><equality><joint joint1="ja" joint2="jb"/></equality></mujoco>
"""


@functools.cache
def efc_offsets() -> np.ndarray | str:
    """Offsets of :data:`EFC_FIELDS` in ``mjData`` (``int64``), or why they are unknown."""
    try:
        layout = _structure_cached("mjData")
        model = mujoco.MjModel.from_xml_string(_PROBE_XML)
        problem = _verify(layout, mujoco.MjData(model), model)
    except (ImportError, KeyError, TypeError, AttributeError, ValueError) as exc:
        return f"mjData's layout could not be read from mujoco.introspect: {exc}"
    if problem is not None:
        return problem
    return np.array([getattr(layout, name).offset for name in EFC_FIELDS], dtype=np.int64)
