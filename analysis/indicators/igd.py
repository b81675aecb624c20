"""Anytime IGD+ (Ishibuchi et al., 2015) of a sequence of evaluations, computed incrementally.

IGD+(A, Z) = mean over z in Z of min over a in A of d+(a, z), with
d+(a, z) = || max(a - z, 0) ||_2 for minimised objectives. For a run, A after k
evaluations is the set of valid points among the first k, so each reference point's
smallest d+ only ever decreases as evaluations arrive: the whole curve k = 1..n is one
running minimum per reference point, which is what `igd_plus_curve` keeps. It equals
moocore's `igd_plus` at every prefix (tests/indicators/test_indicators.py checks it at 1e-12).
Registered as `igd_plus` in `analysis.indicators.registry` (an anytime indicator).
"""

from __future__ import annotations

import numpy as np


def igd_plus_curve(points: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """IGD+ after each of the n points (n x m) against `reference` (r x m), all minimised.

    Rows with any non-finite value are invalid evaluations: they leave the curve where it
    was. Before the first valid point the value is +inf (no approximation set yet). A point
    weakly dominated by an earlier valid one cannot lower any d+, so it is skipped; every
    other point costs one pass over the reference set, one objective at a time.
    """
    points = np.asarray(points, dtype=float)
    reference = np.asarray(reference, dtype=float)
    if points.ndim != 2 or reference.ndim != 2 or points.shape[1] != reference.shape[1]:
        raise ValueError(f"shape mismatch: points {points.shape}, reference {reference.shape}")
    if len(reference) == 0:
        raise ValueError("empty reference set")
    n, m = points.shape
    r = len(reference)
    columns = np.ascontiguousarray(reference.T)
    valid = np.isfinite(points).all(axis=1)
    best = np.full(r, np.inf)
    acc, tmp = np.empty(r), np.empty(r)
    seen, count = np.empty((n, m)), 0  # the valid points kept so far: seen[:count]
    out = np.empty(n)
    current = np.inf
    for i in range(n):
        p = points[i]
        if valid[i] and not (seen[:count] <= p).all(axis=1).any():
            acc.fill(0.0)
            for j in range(m):
                np.subtract(p[j], columns[j], out=tmp)
                np.maximum(tmp, 0.0, out=tmp)
                tmp *= tmp
                acc += tmp
            np.sqrt(acc, out=acc)
            np.minimum(best, acc, out=best)
            current = best.sum() / r
            seen[count] = p
            count += 1
        out[i] = current
    return out


def igd_plus(points: np.ndarray, reference: np.ndarray) -> float:
    """IGD+ of a whole set (the last value of the curve)."""
    return float(igd_plus_curve(points, reference)[-1]) if len(points) else float("inf")
