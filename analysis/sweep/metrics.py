"""Error of a kernel output against its float64 reference, as the seed papers define it.

With y the output and y' the reference, over n values (seed 000 §5, seed 002 §IV):

* MRE   = mean(|y - y'| / max(|y'|, atol)), atol = 1e-8: the papers' MRE with Kernel Tuner's
  AccuracyObserver floor (its "mre" metric), so a zero reference value gives a large but
  finite term instead of a division by zero.
* NRMSE = sqrt(mean((y - y')^2)) / |mean(y')|: normalised by the mean of the reference as
  in both papers (not by its range, and not by its RMS as Kernel Tuner's built-in "nrmse"
  does); the absolute value keeps it non-negative for references with a negative mean.
* NMAE  = sum(|y - y'|) / sum(|y'|).

All three are computed in float64 after decoding the output; NaN/inf in the output
propagate (such configurations are invalid for the objective sets that use them).
"""

from __future__ import annotations

import numpy as np

ATOL = 1e-8
METRICS = ("mre", "nrmse", "nmae")


def _pair(out: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(out, dtype=np.float64).ravel()
    r = np.asarray(ref, dtype=np.float64).ravel()
    if y.shape != r.shape:
        raise ValueError(f"output has {y.size} values, reference {r.size}")
    if y.size == 0:
        raise ValueError("empty output")
    return y, r


def mre(out: np.ndarray, ref: np.ndarray, atol: float = ATOL) -> float:
    """Mean relative error with the |reference| floored at `atol`."""
    y, r = _pair(out, ref)
    with np.errstate(invalid="ignore", over="ignore"):
        return float(np.mean(np.abs(y - r) / np.maximum(np.abs(r), atol)))


def nrmse(out: np.ndarray, ref: np.ndarray) -> float:
    """Root-mean-square error divided by |mean of the reference|."""
    y, r = _pair(out, ref)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        return float(np.sqrt(np.mean(np.square(y - r))) / abs(np.mean(r)))


def nmae(out: np.ndarray, ref: np.ndarray) -> float:
    """Sum of absolute errors divided by the sum of |reference|."""
    y, r = _pair(out, ref)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        return float(np.sum(np.abs(y - r)) / np.sum(np.abs(r)))


def error_metrics(out: np.ndarray, ref: np.ndarray) -> dict[str, float]:
    """{mre, nrmse, nmae} of one output against its reference (the three functions above, sharing |y - y'|)."""
    y, r = _pair(out, ref)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        d = np.abs(y - r)
        a = np.abs(r)
        return {"mre": float(np.mean(d / np.maximum(a, ATOL))),
                "nrmse": float(np.sqrt(np.mean(np.square(d))) / abs(np.mean(r))),
                "nmae": float(np.sum(d) / np.sum(a))}


def worst(per_output: list[dict[str, float]]) -> dict[str, float]:
    """Per metric, the worst (largest; NaN wins) value over several outputs."""
    out = {}
    for m in METRICS:
        vals = [d[m] for d in per_output]
        out[m] = float("nan") if any(np.isnan(v) for v in vals) else max(vals)
    return out
