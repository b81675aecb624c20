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


def _quiet() -> np.errstate:
    """NaN, infinity and division by zero propagate into the metrics without warnings."""
    return np.errstate(invalid="ignore", over="ignore", divide="ignore")


def _parts(out: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """|y - y'|, |y'| and y' in float64 (call under _quiet())."""
    y, r = _pair(out, ref)
    return np.abs(y - r), np.abs(r), r


def _mre(d: np.ndarray, a: np.ndarray, r: np.ndarray, atol: float = ATOL) -> float:
    return float(np.mean(d / np.maximum(a, atol)))


def _nrmse(d: np.ndarray, a: np.ndarray, r: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(d))) / abs(np.mean(r)))


def _nmae(d: np.ndarray, a: np.ndarray, r: np.ndarray) -> float:
    return float(np.sum(d) / np.sum(a))


def mre(out: np.ndarray, ref: np.ndarray, atol: float = ATOL) -> float:
    """Mean relative error with the |reference| floored at `atol`."""
    with _quiet():
        return _mre(*_parts(out, ref), atol)


def nrmse(out: np.ndarray, ref: np.ndarray) -> float:
    """Root-mean-square error divided by |mean of the reference|."""
    with _quiet():
        return _nrmse(*_parts(out, ref))


def nmae(out: np.ndarray, ref: np.ndarray) -> float:
    """Sum of absolute errors divided by the sum of |reference|."""
    with _quiet():
        return _nmae(*_parts(out, ref))


def error_metrics(out: np.ndarray, ref: np.ndarray) -> dict[str, float]:
    """{mre, nrmse, nmae} of one output against its reference, sharing |y - y'| and |y'|."""
    with _quiet():
        parts = _parts(out, ref)
        return {"mre": _mre(*parts), "nrmse": _nrmse(*parts), "nmae": _nmae(*parts)}


def worst(per_output: list[dict[str, float]]) -> dict[str, float]:
    """Per metric, the worst (largest; NaN wins) value over several outputs."""
    out = {}
    for m in METRICS:
        vals = [d[m] for d in per_output]
        out[m] = float("nan") if any(np.isnan(v) for v in vals) else max(vals)
    return out
