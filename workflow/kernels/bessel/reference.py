"""Bessel I0: inputs x ~ U[0, 10) and the float64 reference by the converged power series."""

from __future__ import annotations

import numpy as np


def make_inputs(size: dict[str, int], seed: int) -> dict[str, np.ndarray]:
    """x ~ U[0, 10), float64, from `seed`."""
    rng = np.random.default_rng(seed)
    return {"x": rng.uniform(0.0, 10.0, size["n"])}


def reference(inputs: dict[str, np.ndarray], size: dict[str, int]) -> dict[str, np.ndarray]:
    """I0(x) in float64: the series summed until every term is below 1e-17 of the sum."""
    x = np.asarray(inputs["x"], dtype=np.float64)
    q = x * x / 4.0
    term = np.ones_like(x)
    total = np.ones_like(x)
    k = 0
    while True:
        k += 1
        term = term * q / (k * k)
        total = total + term
        if np.all(term <= 1e-17 * total):
            return {"y": total}
