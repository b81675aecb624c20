"""The statistics primitives of the published tables (analysis.statistics), by hand and against scipy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import bootstrap, mannwhitneyu

from analysis.statistics import (
    Bootstrap,
    a12_lower_better,
    bounded_difference,
    censored_median,
    holm,
    mann_whitney_p,
    mean_sd_ci,
    relative_improvement,
)

nan = float("nan")


def test_relative_improvement_when_the_baseline_median_is_zero():
    rel = relative_improvement(np.array([2.0, 0.0, 0.0, 4.0]), np.array([1.0, 0.0, 0.5, 6.0]))
    assert rel[0] == 0.5 and rel[1] == 0.0 and np.isnan(rel[2]) and rel[3] == -0.5


def test_bounded_difference_is_defined_for_every_pair():
    d = bounded_difference(np.array([0.0, 0.0, 2.0, 4.0]), np.array([0.0, 3.0, 1.0, 6.0]))
    assert d.tolist() == pytest.approx([0.0, -1.0, 0.5, -1 / 3])
    with pytest.raises(ValueError, match="non-negative"):
        bounded_difference(np.array([-1.0]), np.array([1.0]))


def test_bounded_difference_is_the_relative_improvement_where_the_other_is_not_worse():
    rng = np.random.default_rng(5)
    baseline = rng.random(50) + 0.1
    other = baseline * rng.random(50)  # other <= baseline: max(baseline, other) is the baseline
    assert bounded_difference(baseline, other) == pytest.approx(relative_improvement(baseline, other))
    worse = baseline * (1 + rng.random(50))  # other > baseline: the bounded one divides by the larger value
    bounded = bounded_difference(baseline, worse)
    assert bounded == pytest.approx((baseline - worse) / worse) and (bounded > -1).all()


def test_holm_and_a12_by_hand():
    assert holm([0.01, 0.04, 0.03]).tolist() == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.6]).tolist() == pytest.approx([1.0, 1.0])
    assert a12_lower_better(np.array([1.0, 2.0]), np.array([2.0, 3.0])) == pytest.approx(0.875)


def _holm_rejects(p: np.ndarray, alpha: float) -> set[int]:
    """Holm's step-down procedure as stated: in ascending order of p, reject while p_(k) <= alpha / (m - k)."""
    rejected = set()
    for k, i in enumerate(np.argsort(p, kind="stable")):
        if p[i] > alpha / (len(p) - k):
            break
        rejected.add(int(i))
    return rejected


def test_holm_adjusted_p_values_reject_what_the_step_down_procedure_rejects():
    """An adjusted p-value is the smallest level at which Holm's procedure rejects the hypothesis: at every
    level alpha, {i: p_holm_i <= alpha} is the procedure's rejected set."""
    rng = np.random.default_rng(11)
    for m in (1, 2, 3, 5, 8):
        for _ in range(20):
            p = rng.random(m) ** 3  # many small p-values, so that levels below 0.1 reject some
            adjusted = holm(p)
            assert ((adjusted >= p) & (adjusted <= 1)).all()
            for alpha in (0.001, 0.01, 0.05, 0.1, 0.3):
                assert {int(i) for i in np.flatnonzero(adjusted <= alpha)} == _holm_rejects(p, alpha), (p, alpha)


def test_a12_is_scipys_u_statistic_over_the_number_of_pairs():
    """scipy's U of its first sample counts the pairs where it is larger, ties half; A12 of a lower-is-better
    indicator counts where `a` is smaller: U(b, a) / (n m), and 1 - U(a, b) / (n m)."""
    rng = np.random.default_rng(2)
    for n, m in ((1, 1), (3, 7), (10, 10), (25, 4)):
        a = rng.integers(0, 5, n).astype(float)  # few distinct values: many ties
        b = rng.integers(0, 5, m).astype(float)
        a12 = a12_lower_better(a, b)
        assert a12 == pytest.approx(mannwhitneyu(b, a).statistic / (n * m))
        assert a12 == pytest.approx(1 - mannwhitneyu(a, b).statistic / (n * m))


def test_mann_whitney_p_is_scipys_two_sided_test_except_for_one_shared_constant():
    rng = np.random.default_rng(4)
    a, b = rng.random(8), rng.random(12) + 0.3
    assert mann_whitney_p(a, b) == mannwhitneyu(a, b, alternative="two-sided").pvalue
    assert mann_whitney_p(a, b) == mann_whitney_p(b, a)
    different = (np.full(5, 1.0), np.full(5, 2.0))  # two constants: a test, and a small p-value
    assert mann_whitney_p(*different) == mannwhitneyu(*different, alternative="two-sided").pvalue < 0.05
    assert mann_whitney_p(np.full(4, 0.5), np.full(6, 0.5)) == 1.0


def test_bootstrap_interval_is_reproducible_and_agrees_with_scipys_percentile_bootstrap():
    x = np.random.default_rng(0).normal(size=30)
    boot = Bootstrap(20000, 1)
    lo, hi = boot.ci(x)
    assert boot.ci(x) == (lo, hi)  # a fresh generator per call: the same interval every time
    assert lo < x.mean() < hi
    scipy_ci = bootstrap((x,), np.mean, n_resamples=20000, method="percentile",
                         rng=np.random.default_rng(2)).confidence_interval
    se = x.std(ddof=1) / np.sqrt(len(x))
    # two Monte Carlo estimates of the same percentiles: apart by a small fraction of the standard error
    assert abs(lo - scipy_ci.low) < 0.1 * se and abs(hi - scipy_ci.high) < 0.1 * se
    assert np.isnan(boot.ci(np.array([1.0]))).all() and np.isnan(boot.ci(np.array([]))).all()


def test_mean_sd_ci_scales_before_it_summarises_and_says_nan_for_too_few_values():
    boot = Bootstrap(500, 3)
    v = np.array([0.1, 0.4, 0.25, 0.3])
    mean, sd, lo, hi = mean_sd_ci(v, boot, 100.0)
    assert (mean, sd) == pytest.approx((v.mean() * 100, v.std(ddof=1) * 100))
    assert (lo, hi) == pytest.approx(boot.ci(v * 100))
    one = mean_sd_ci(np.array([2.0]), boot, 1.0)
    assert one[0] == 2.0 and np.isnan(one[1:]).all()
    assert np.isnan(mean_sd_ci(np.array([]), boot, 1.0)).all()


def test_censored_median_ranks_not_reached_last():
    assert censored_median([10.0, 20.0, nan]) == 10.0
    assert censored_median([10.0, nan, nan]) == float("-inf")
    assert censored_median([30.0, 10.0, 20.0]) == 20.0
    assert censored_median(np.array([1.0, nan, 3.0])) == 1.0
    assert censored_median([10.0, 20.0, 30.0, nan]) == 15.0  # an even count: the two middle values averaged
    assert censored_median([10.0, 20.0, nan, nan]) == float("-inf")  # one of the middle two is "not reached"
    assert np.isnan(censored_median([]))
    # a Series masked where not reached, as the README's speedup summary passes it
    speedup = pd.Series([40.0, 10.0, 25.0])
    assert censored_median(speedup.where(pd.Series([True, False, True]))) == 25.0


def _naive_cluster_ci(values, clusters, resamples, seed):
    """The cluster bootstrap written out: per resample, draw as many clusters as there are (numbered in the
    order they first occur), pool every value of each cluster drawn, and average."""
    order = list(dict.fromkeys(clusters))
    members = {c: [v for v, c2 in zip(values, clusters) if c2 == c] for c in order}
    draws = np.random.default_rng(seed).integers(0, len(order), size=(resamples, len(order)))
    means = []
    for row in draws:
        pooled = [v for i in row for v in members[order[i]]]
        means.append(sum(pooled) / len(pooled))
    return tuple(np.percentile(means, [2.5, 97.5]))


def test_cluster_bootstrap_equals_a_naive_reference_on_small_data():
    values = np.array([1.0, 4.0, 2.5, -1.0, 3.0, 0.5, 7.0])
    clusters = ["b", "b", "a", "c", "a", "d", "d"]  # uneven clusters, not in sorted order
    boot = Bootstrap(400, 7)
    assert boot.ci(values, clusters) == pytest.approx(_naive_cluster_ci(list(values), clusters, 400, 7))
    # the labels name the clusters only: other labels in the same pattern give the same interval
    assert boot.ci(values, [9, 9, 3, 5, 3, 1, 1]) == boot.ci(values, clusters)


def test_cluster_bootstrap_with_one_value_per_cluster_is_the_pair_bootstrap():
    x = np.random.default_rng(4).normal(size=12)
    boot = Bootstrap(3000, 2)
    assert boot.ci(x, [f"space{i}" for i in range(12)]) == boot.ci(x)


def test_cluster_bootstrap_widens_the_interval_of_perfectly_correlated_pairs():
    """Two identical values per space (O3 and O5 of one space moving together): the pair bootstrap takes them
    for 20 independent values and gives an interval about sqrt(2) too narrow; the cluster bootstrap, drawing
    spaces, gives the interval of the 10 spaces' values."""
    per_space = np.random.default_rng(1).normal(size=10)
    values = np.repeat(per_space, 2)
    spaces = np.repeat(np.arange(10), 2)
    boot = Bootstrap(20000, 0)
    pair_lo, pair_hi = boot.ci(values)
    lo, hi = boot.ci(values, spaces)
    assert hi - lo > 1.2 * (pair_hi - pair_lo)
    assert (lo, hi) == pytest.approx(boot.ci(per_space))  # one value per space: the same draws
    assert boot.ci(values, spaces) == (lo, hi)  # seeded: the same interval on every call


def test_cluster_bootstrap_needs_two_clusters_and_one_label_per_value():
    boot = Bootstrap(100, 0)
    assert np.isnan(boot.ci(np.array([1.0, 2.0]), ["s", "s"])).all()  # one space: nothing to resample
    assert np.isnan(boot.ci(np.array([]), [])).all()
    with pytest.raises(ValueError, match="one cluster per value"):
        boot.ci(np.array([1.0, 2.0]), ["s"])
    mean, sd, lo, hi = mean_sd_ci(np.array([0.1, 0.3, 0.2]), boot, 100.0, ["a", "a", "b"])
    assert (mean, sd) == pytest.approx((20.0, 10.0))
    assert (lo, hi) == pytest.approx(boot.ci(np.array([10.0, 30.0, 20.0]), ["a", "a", "b"]))
