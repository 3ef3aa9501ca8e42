r"""daqp through its C API: the structs ``daqp.solve`` builds, built once per plan.

:math:`\min_x \tfrac12 x^T H x + f^T x` subject to :math:`l \le x_{0:m_s} \le u` (simple
bounds, the first :math:`m_s` of the :math:`m` constraints) and
:math:`b_l \le A x \le b_u` (``sense`` 5 marks an equality row). ``daqp.solve`` fills
``DAQPProblem``, ``DAQPSettings`` (daqp's defaults) and ``DAQPResult`` on the stack
and calls ``daqp_quadprog``; here the three live in one buffer of the plan, whose
pointers are written once and whose sizes (and the ``NULL`` pointers ``daqp.solve``
passes for empty parts) are set per step. Layouts (x86-64/AArch64, daqp 0.7–0.11)::

    DAQPProblem (80 B): int n @0, m @4, ms @8; double *H @16, *f @24, *A @32,
                        *bupper @40, *blower @48; int *sense @56, *break_points @64;
                        int nh @72, problem_type @76
    DAQPResult  (64 B): double *x @0, *lam @8, fval @16, soft_slack @24;
                        int exitflag @32, iter @36, nodes @40; double times @48, @56
"""

from __future__ import annotations

import numpy as np
from numba import njit

from posekit.ik.compiled import header as h
from posekit.ik.compiled.native import call_v_ppp, int32s, int64s
from posekit.ik.compiled.symbols import FN_DAQP_QUADPROG

PROBLEM = 0  # byte offsets in the buffer
RESULT = 80
SETTINGS = 144
BUFFER_WORDS = (SETTINGS + 512) // 8


def daqp_buffer(settings: bytes, nv: int, hessian: int, gradient: int, solution: int) -> np.ndarray:
    """The buffer of the three structs, with the pointers that never change.

    Args:
        settings: A ``DAQPSettings`` from ``daqp_default_settings`` (at most 512 bytes).
        nv: Number of variables :math:`n`.
        hessian: Address of :math:`H` (``nv × nv``).
        gradient: Address of :math:`f` (``nv``).
        solution: Address of :math:`x` (``nv``).
    """
    buffer = np.zeros(BUFFER_WORDS, dtype=np.int64)
    raw = buffer.view(np.uint8)
    raw[SETTINGS : SETTINGS + len(settings)] = np.frombuffer(settings, dtype=np.uint8)
    words = buffer.view(np.int64)
    buffer.view(np.int32)[PROBLEM // 4] = nv
    words[(PROBLEM + 16) // 8] = hessian
    words[(PROBLEM + 24) // 8] = gradient
    words[(RESULT + 0) // 8] = solution
    return buffer


@njit(cache=True, nogil=True)
def solve(ints: np.ndarray, bounds: int, rows: int, matrix: int, vectors: tuple) -> int:
    """Run ``daqp_quadprog`` on ``bounds`` simple bounds and ``rows`` rows; return its exit flag.

    ``vectors`` holds the addresses of ``bupper``, ``blower``, ``sense`` and ``lam``.
    """
    address = ints[h.H_DAQP]
    words = int64s(address, BUFFER_WORDS)
    halves = int32s(address, 2 * BUFFER_WORDS)
    total = bounds + rows
    bupper, blower, sense, lam = vectors
    halves[(PROBLEM + 4) // 4] = total
    halves[(PROBLEM + 8) // 4] = bounds
    words[(PROBLEM + 32) // 8] = matrix if rows > 0 else 0
    words[(PROBLEM + 40) // 8] = bupper if total > 0 else 0
    words[(PROBLEM + 48) // 8] = blower if total > 0 else 0
    words[(PROBLEM + 56) // 8] = sense if total > 0 else 0
    words[(RESULT + 8) // 8] = lam if total > 0 else 0
    call_v_ppp(
        ints[h.H_FN + FN_DAQP_QUADPROG], address + RESULT, address + PROBLEM, address + SETTINGS
    )
    return halves[(RESULT + 32) // 4]
