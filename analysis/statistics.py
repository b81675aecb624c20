"""The statistics the published tables are computed with, on plain arrays (no table layout here).

- `Bootstrap` and `mean_sd_ci`: mean, SD and 95 % percentile bootstrap interval of a mean; given the cluster
  of each value (the space of each (space, objective set) pair), the interval is a cluster bootstrap that
  resamples whole clusters, so that values of one cluster, which are not independent, are drawn together.
- `relative_improvement`: the thesis's (baseline - other) / baseline, undefined (NaN) where only the
  baseline is 0; `bounded_difference`: (baseline - other) / max(baseline, other), defined for every
  pair of non-negative values. Both are positive where `other` is lower (better).
- `mann_whitney_p`, `holm`, `a12_lower_better`: two-sided Mann-Whitney U, Holm-Bonferroni adjustment and
  the Vargha-Delaney A12 of a minimised indicator.
- `censored_median`: a median with "not reached" (NaN) ranked below every reached value.

scipy.stats is imported by the first Mann-Whitney test only, so that the modules needing just a
bootstrap or a median (the README renderer, the constraint-aware tables) do not import it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Bootstrap:
    """A percentile bootstrap of the mean: `resamples` resamples drawn with a generator seeded by `seed`."""

    resamples: int = 10000
    seed: int = 0

    def ci(self, values: np.ndarray, clusters: Sequence[object] | np.ndarray | None = None) -> tuple[float, float]:
        """95 % percentile interval of the mean of `values` (NaN for fewer than 2 values, or 2 clusters).

        Without `clusters` every value is drawn independently (the pair bootstrap). With `clusters` (one label
        per value) each resample draws as many clusters as there are, with replacement, and takes the mean of
        every value of the clusters drawn (a cluster drawn twice counts twice): the cluster bootstrap, for
        values that are independent only between clusters. Clusters are numbered in the order they first
        occur, so with one value per cluster the draws, and the interval, are the pair bootstrap's.

        Every call draws from a fresh generator seeded with `seed`, so equal inputs give equal intervals
        whatever was computed before."""
        values = np.asarray(values, dtype=float)
        if clusters is None:
            if len(values) < 2:
                return (float("nan"), float("nan"))
            rng = np.random.default_rng(self.seed)
            means = values[rng.integers(0, len(values), size=(self.resamples, len(values)))].mean(axis=1)
        else:
            labels = np.asarray(clusters, dtype=object)
            if labels.shape != values.shape:
                raise ValueError(f"a cluster bootstrap needs one cluster per value ({len(labels)} clusters for "
                                 f"{len(values)} values)")
            _, first, index = np.unique(labels.astype(str), return_index=True, return_inverse=True)
            # renumber the clusters in the order of their first value
            rank = np.empty(len(first), dtype=int)
            rank[np.argsort(first)] = np.arange(len(first))
            index = rank[index.ravel()]
            k = len(first)
            if k < 2:
                return (float("nan"), float("nan"))
            sums = np.bincount(index, weights=values, minlength=k)
            sizes = np.bincount(index, minlength=k).astype(float)
            rng = np.random.default_rng(self.seed)
            drawn = rng.integers(0, k, size=(self.resamples, k))
            means = sums[drawn].sum(axis=1) / sizes[drawn].sum(axis=1)
        lo, hi = np.percentile(means, [2.5, 97.5])
        return float(lo), float(hi)


def mean_sd_ci(values: np.ndarray, boot: Bootstrap, scale: float,
               clusters: Sequence[object] | np.ndarray | None = None) -> tuple[float, float, float, float]:
    """Mean, SD (ddof 1) and bootstrap interval of `values` x scale: the mean is NaN for no value, the SD for
    fewer than 2, the interval for fewer than 2 values or, given `clusters` (`Bootstrap.ci`), 2 clusters."""
    v = np.asarray(values, dtype=float) * scale
    lo, hi = boot.ci(v, clusters)
    return (float(v.mean()) if len(v) else float("nan"), float(v.std(ddof=1)) if len(v) > 1 else float("nan"),
            lo, hi)


def relative_improvement(baseline: np.ndarray, other: np.ndarray) -> np.ndarray:
    """(baseline - other) / baseline; 0 when both are 0; NaN when only the baseline is 0."""
    baseline = np.asarray(baseline, dtype=float)
    other = np.asarray(other, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = (baseline - other) / baseline
    rel = np.where((baseline == 0) & (other == 0), 0.0, rel)
    return np.where((baseline == 0) & (other != 0), np.nan, rel)


def bounded_difference(baseline: np.ndarray, other: np.ndarray) -> np.ndarray:
    """(baseline - other) / max(baseline, other) in [-1, 1]: 0 when both are 0, -1 when only the baseline is 0.

    Defined for every pair of non-negative values (positive: `other` is lower, i.e. better); a negative
    value is a ValueError."""
    baseline = np.asarray(baseline, dtype=float)
    other = np.asarray(other, dtype=float)
    if (baseline < 0).any() or (other < 0).any():
        raise ValueError("the bounded difference needs non-negative values")
    top = np.maximum(baseline, other)
    with np.errstate(divide="ignore", invalid="ignore"):
        diff = (baseline - other) / top
    return np.where(top == 0, 0.0, diff)


def mann_whitney_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided Mann-Whitney U p-value of `a` against `b`, both non-empty (scipy's defaults otherwise); 1 where
    both samples are the same constant (every pair tied: no evidence of a difference), without a test."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if np.all(a == a[0]) and np.all(b == a[0]):
        return 1.0
    from scipy.stats import mannwhitneyu

    return float(mannwhitneyu(a, b, alternative="two-sided").pvalue)


def p_text(p: float | None) -> str:
    """A p-value for a sentence: `p < 0.001` below 0.001, else `p = ` with three significant digits."""
    if p is None or np.isnan(p):
        return "p not computed"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3g}"


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values, in the order given (monotone in the raw p-values, capped at 1)."""
    p = np.asarray(pvalues, dtype=float)
    order = np.argsort(p)
    m = len(p)
    adjusted = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, (m - rank) * p[i])
        adjusted[i] = min(1.0, running)
    return adjusted


def a12_lower_better(a: np.ndarray, b: np.ndarray) -> float:
    """P(a < b) + 0.5 P(a == b) over all pairs (Vargha-Delaney A12 for a minimised indicator)."""
    a = np.asarray(a, dtype=float)[:, None]
    b = np.asarray(b, dtype=float)[None, :]
    return float(((a < b).sum() + 0.5 * (a == b).sum()) / (a.size * b.size))


def censored_median(values: Sequence[float] | np.ndarray) -> float:
    """Median where NaN ("not reached") ranks below every other value: -inf when at least half are NaN
    (an even count's median averages the two middle values, so one NaN among them gives -inf too); NaN
    for no value."""
    v = np.asarray(values, dtype=float)
    return float(np.median(np.where(np.isnan(v), -np.inf, v))) if len(v) else float("nan")
