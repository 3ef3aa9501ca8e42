"""Views of a plan's ``work`` buffer by offset (no ``reshape``: no exception paths to compile)."""

from __future__ import annotations

import numpy as np
from numba import njit

from posekit.ik.compiled import header as h
from posekit.ik.compiled.native import floats, matrix


@njit(cache=True, nogil=True)
def work_matrix(ints: np.ndarray, offset: int, rows: int, columns: int) -> np.ndarray:
    """The row-major ``rows × columns`` block of ``work`` starting at ``offset``."""
    return matrix(ints[h.H_WORK] + 8 * offset, rows, columns)


@njit(cache=True, nogil=True)
def work_vector(ints: np.ndarray, offset: int, count: int) -> np.ndarray:
    """The ``count`` doubles of ``work`` starting at ``offset``."""
    return floats(ints[h.H_WORK] + 8 * offset, count)
