r"""Raw memory and C calls from Numba's nopython mode, cacheable.

A compiled step reads MuJoCo's buffers and calls MuJoCo's and daqp's C functions by
address. Addresses are plain ``int64`` values handed over at run time (never baked
into the machine code), so the kernels that use these helpers can be cached on disk
with ``cache=True`` and reused by every process.

- :func:`floats`, :func:`matrix`, :func:`int32s`, :func:`int64s`: a NumPy view of
  ``n`` elements at an address (no copy, no ownership: the caller keeps the memory
  alive).
- ``call_*``: call the C function at an address with a fixed signature. Pointers are
  passed as ``int64`` (x86-64 and AArch64 pass both in the same integer registers);
  ``int`` arguments are 32-bit, ``mjtNum`` and ``c_float`` are ``double``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from llvmlite import ir
from numba import carray, njit, types
from numba.extending import intrinsic

_LLVM: dict[str, ir.Type] = {
    "p": ir.IntType(64),
    "i": ir.IntType(32),
    "d": ir.DoubleType(),
    "v": ir.VoidType(),
}
_NUMBA: dict[str, Any] = {"p": types.int64, "i": types.int32, "d": types.float64, "v": types.void}


def _c_call(signature: str) -> Callable[..., Any]:
    """An intrinsic ``call(address, *arguments)`` for the C signature ``"r:abc"``.

    ``r`` is the return code and ``abc`` the argument codes: ``p`` pointer, ``i`` int,
    ``d`` double, ``v`` void (return only).
    """
    returns, arguments = signature.split(":")
    function_type = ir.FunctionType(_LLVM[returns], [_LLVM[code] for code in arguments])
    numba_signature = _NUMBA[returns](types.int64, *[_NUMBA[code] for code in arguments])

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        function = builder.inttoptr(args[0], function_type.as_pointer())
        result = builder.call(function, args[1:])
        return context.get_dummy_value() if returns == "v" else result

    return intrinsic(_TYPERS[len(arguments)](numba_signature, codegen))


def _typer_1(signature: Any, codegen: Any) -> Callable[..., Any]:
    def typer(typingctx: Any, address: Any, a: Any) -> Any:
        return signature, codegen

    return typer


def _typer_2(signature: Any, codegen: Any) -> Callable[..., Any]:
    def typer(typingctx: Any, address: Any, a: Any, b: Any) -> Any:
        return signature, codegen

    return typer


def _typer_3(signature: Any, codegen: Any) -> Callable[..., Any]:
    def typer(typingctx: Any, address: Any, a: Any, b: Any, c: Any) -> Any:
        return signature, codegen

    return typer


def _typer_4(signature: Any, codegen: Any) -> Callable[..., Any]:
    def typer(typingctx: Any, address: Any, a: Any, b: Any, c: Any, d: Any) -> Any:
        return signature, codegen

    return typer


def _typer_5(signature: Any, codegen: Any) -> Callable[..., Any]:
    def typer(typingctx: Any, address: Any, a: Any, b: Any, c: Any, d: Any, e: Any) -> Any:
        return signature, codegen

    return typer


def _typer_6(signature: Any, codegen: Any) -> Callable[..., Any]:
    def typer(typingctx: Any, address: Any, a: Any, b: Any, c: Any, d: Any, e: Any, f: Any) -> Any:
        return signature, codegen

    return typer


# Numba's intrinsics take a fixed parameter list (no *args), hence one typer per arity.
_TYPERS: dict[int, Callable[[Any, Any], Callable[..., Any]]] = {
    1: _typer_1,
    2: _typer_2,
    3: _typer_3,
    4: _typer_4,
    5: _typer_5,
    6: _typer_6,
}


call_d_p = _c_call("d:p")
"""``double f(void*)``: ``mju_normalize3(vec)``."""
call_v_pp = _c_call("v:pp")
"""``void f(void*, void*)``: ``mj_kinematics(m, d)``, ``mj_comPos``, ``mj_crb``, ``mju_mat2Quat(q, R)`` …"""
call_v_ppp = _c_call("v:ppp")
"""``void f(void*, void*, void*)``: ``mj_fullM(m, d, dst)``, ``daqp_quadprog(res, qp, settings)``."""
call_v_pppi = _c_call("v:pppi")
"""``void f(m, d, jacp, int body)``: ``mj_jacSubtreeCom``."""
call_v_ppppi = _c_call("v:ppppi")
"""``void f(m, d, jacp, jacr, int id)``: ``mj_jacBody``, ``mj_jacSite``, ``mj_jacGeom``."""
call_v_pppppi = _c_call("v:pppppi")
"""``void f(m, d, jacp, jacr, point, int body)``: ``mj_jac``."""
call_v_ppdpp = _c_call("v:ppdpp")
"""``void f(m, qvel, double dt, qpos1, qpos2)``: ``mj_differentiatePos``."""
call_v_pppd = _c_call("v:pppd")
"""``void f(m, qpos, qvel, double dt)``: ``mj_integratePos``."""
call_d_ppiidp = _c_call("d:ppiidp")
"""``double f(m, d, int g1, int g2, double distmax, fromto)``: ``mj_geomDistance``."""


def _pointer_cast(element: Any, llvm_element: ir.Type) -> Callable[..., Any]:
    pointer_type = types.CPointer(element)

    def typer(typingctx: Any, address: Any) -> Any:
        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            return builder.inttoptr(args[0], llvm_element.as_pointer())

        return pointer_type(types.int64), codegen

    return intrinsic(typer)


_float_pointer = _pointer_cast(types.float64, ir.DoubleType())
_int32_pointer = _pointer_cast(types.int32, ir.IntType(32))
_int64_pointer = _pointer_cast(types.int64, ir.IntType(64))


@njit(cache=True, nogil=True)
def counter() -> int:
    """A zero the compiler does not see as a constant.

    A callee given a literal (``0``, ``True``) is compiled once for the literal and
    once more for the plain type; counters started from this give one signature.
    """
    return 0


@njit(cache=True, nogil=True)
def floats(address: int, count: int) -> np.ndarray:
    """The ``count`` doubles at ``address`` as a 1-D view."""
    return carray(_float_pointer(address), (count,))


@njit(cache=True, nogil=True)
def matrix(address: int, rows: int, columns: int) -> np.ndarray:
    """The row-major ``rows × columns`` doubles at ``address`` as a 2-D view."""
    return carray(_float_pointer(address), (rows, columns))


@njit(cache=True, nogil=True)
def int32s(address: int, count: int) -> np.ndarray:
    """The ``count`` 32-bit integers at ``address`` as a 1-D view."""
    return carray(_int32_pointer(address), (count,))


@njit(cache=True, nogil=True)
def int64s(address: int, count: int) -> np.ndarray:
    """The ``count`` 64-bit integers at ``address`` as a 1-D view."""
    return carray(_int64_pointer(address), (count,))
