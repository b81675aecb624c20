"""NSGA-III's hyperplane normalisation without the BLAS: the same result on every machine.

pymoo's NSGA-III survival (Kernel Tuner's nsga3 and the constraint-unaware variant alike)
normalises the objectives by the hyperplane through the extreme points: `np.linalg.solve(M, 1)`
(LAPACK), then `np.allclose(np.dot(M, plane), 1)` (BLAS) to decide whether the plane is used at
all. LAPACK and the BLAS are the machine's: OpenBLAS picks its kernels by CPU and they round
differently, and on the discrete spaces of this study the extreme points are often nearly
degenerate, where a last-bit difference moves the nadir point (or flips the fallback) and with
it the niche of every individual. These are the only BLAS/LAPACK calls in an NSGA-III run once
the reference directions come from data (`refdirs`).

During a run (`portable_hyperplane()`), the `np` that `pymoo.algorithms.moo.nsga3` sees answers
`linalg.solve` and `dot` with Gaussian elimination and sums in Python floats, in a fixed order:
IEEE 754 operations, each correctly rounded, no fused multiply-add, so the same on every
machine. A zero pivot raises LinAlgError, which pymoo catches and falls back to the worst point
of the front, as it does for LAPACK's singular matrices. Every other attribute is NumPy's own.
The results are not bit-identical to LAPACK's (whose rounding is the machine's) but agree with
them to rounding; tests compare the two and pin the resulting traces.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from analysis.fastpath.patching import ModuleWith, swapped


def portable_solve(a: Any, b: Any) -> np.ndarray:
    """The solution x of a x = b for a square float matrix by Gaussian elimination with partial pivoting
    (the first largest |pivot|, as LAPACK's idamax picks it), in Python floats in a fixed order.

    Python's float operations are IEEE 754 double operations, each correctly rounded, with no fused
    multiply-add and no wider intermediates, so the result is the same on every machine. Raises
    numpy.linalg.LinAlgError on a zero pivot, as LAPACK does. Non-square or non-finite input is
    handed to numpy.linalg.solve unchanged.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or b.shape != (a.shape[0],) or not (
            np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return np.linalg.solve(a, b)
    n = a.shape[0]
    rows = [[float(v) for v in a[i]] + [float(b[i])] for i in range(n)]
    for col in range(n):
        pivot = col
        for r in range(col + 1, n):
            if abs(rows[r][col]) > abs(rows[pivot][col]):
                pivot = r
        if rows[pivot][col] == 0.0:
            raise np.linalg.LinAlgError("Singular matrix")
        rows[col], rows[pivot] = rows[pivot], rows[col]
        p = rows[col]
        for r in range(col + 1, n):
            f = rows[r][col] / p[col]
            if f != 0.0:
                rows[r] = [x - f * y for x, y in zip(rows[r], p)]
    x = [0.0] * n
    for i in range(n - 1, -1, -1):
        acc = rows[i][n]
        for j in range(i + 1, n):
            acc -= rows[i][j] * x[j]
        x[i] = acc / rows[i][i]
    return np.array(x)


def portable_dot(a: Any, b: Any) -> Any:
    """Matrix-vector product summed left to right in Python floats; other shapes are NumPy's dot."""
    a_arr, b_arr = np.asarray(a), np.asarray(b)
    if a_arr.ndim != 2 or b_arr.ndim != 1 or a_arr.shape[1] != b_arr.shape[0] or a_arr.dtype.kind != "f" \
            or b_arr.dtype.kind != "f":
        return np.dot(a, b)
    x = [float(v) for v in b_arr]
    out = []
    for row in a_arr:
        acc = 0.0
        for p, q in zip(row, x):
            acc += float(p) * q
        out.append(acc)
    return np.array(out)


# NumPy, but for `linalg.solve` and `dot`
PORTABLE_NUMPY = ModuleWith(np, linalg=ModuleWith(np.linalg, solve=portable_solve), dot=portable_dot)


def portable_hyperplane() -> contextlib.AbstractContextManager:
    """Let pymoo's NSGA-III normalisation solve and check its hyperplane in a fixed float order while active."""
    from pymoo.algorithms.moo import nsga3

    return swapped(nsga3, np=PORTABLE_NUMPY)
