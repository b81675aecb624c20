"""Newton-Raphson on quartics: deterministic float64 inputs and the float64 reference.

Each polynomial p(x) = a4 x^4 + a3 x^3 + a2 x^2 + a1 x + a0 has a1..a4 in [0.5, 2] and
a0 < 0 chosen so that a planted value r in [0.5, 2] is its root; by Descartes' rule of
signs it is the only positive root, and p' > 0, p'' > 0 on x > 0.  The start x0 = r*s,
s in [1, 5], lies above the root, so Newton's iterates decrease monotonically towards r
and stay inside [r, x0] <= 10, where |p| < 2.3e4 and |p'| < 1.1e4 (finite in FP16).
The reference is exactly 10 float64 Newton steps (Horner for p and p'), the same
iteration the kernels perform; with these data 10 steps reach r to machine precision.
"""

from __future__ import annotations

import numpy as np

ITERATIONS = 10
COEF_RANGE = (0.5, 2.0)  # a1..a4
ROOT_RANGE = (0.5, 2.0)  # planted root r
START_RANGE = (1.0, 5.0)  # x0 / r


def make_inputs(size: dict[str, int], seed: int) -> dict[str, np.ndarray]:
    """coef (5, n): rows a0..a4 (structure of arrays); x0 (n): start values."""
    n = int(size["n"])
    rng = np.random.default_rng(seed)
    a = rng.uniform(*COEF_RANGE, size=(4, n))  # a1, a2, a3, a4
    r = rng.uniform(*ROOT_RANGE, size=n)
    s = rng.uniform(*START_RANGE, size=n)
    a1, a2, a3, a4 = a
    a0 = -((((a4 * r + a3) * r + a2) * r + a1) * r)
    coef = np.stack([a0, a1, a2, a3, a4])
    return {"coef": coef, "x0": r * s}


def newton(coef: np.ndarray, x: np.ndarray, iterations: int) -> np.ndarray:
    """`iterations` float64 Newton steps x -= p(x)/p'(x), p and p' by Horner's rule."""
    a0, a1, a2, a3, a4 = (np.asarray(c, dtype=np.float64) for c in coef)
    d3, d2, d1 = 4.0 * a4, 3.0 * a3, 2.0 * a2
    x = np.array(x, dtype=np.float64, copy=True)
    for _ in range(iterations):
        f = (((a4 * x + a3) * x + a2) * x + a1) * x + a0
        df = ((d3 * x + d2) * x + d1) * x + a1
        x -= f / df
    return x


def reference(inputs: dict[str, np.ndarray], size: dict[str, int]) -> dict[str, np.ndarray]:
    """root (n): the 10th Newton iterate in float64."""
    return {"root": newton(inputs["coef"], inputs["x0"], ITERATIONS)}
