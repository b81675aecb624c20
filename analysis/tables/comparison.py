"""The study's tables (STUDY §4): indicator statistics, Tables 2-5, significance, ablation.

Definitions (all IGD+ values are of the normalised objectives; lower is better):
- a relative difference of setting A against baseline B compares, per (space, objective set,
  budget) pair, the medians m_A and m_B over repetitions of a lower-is-better quantity (final
  IGD+ for Tables 2, 3 and the ablation, evaluation time for Table 5). Every such table gives,
  through `paired_summary`, per row: how many pairs A is better / equal / worse in; the
  thesis's mean of (m_B - m_A) / m_B, which is undefined where m_B is 0 and m_A is not (0 when
  both are 0), so it covers only the pairs where it is defined; and the mean of the bounded
  difference (m_B - m_A) / max(m_A, m_B) in [-1, 1] (0 when both are 0, -1 when only m_B is 0),
  which covers every pair. Positive values favour A.
- speedup to RS quality (Table 4): q = RS's median IGD+ at the largest budget B; k* = the
  fewest evaluations at which A's median curve (its budget-B runs) is <= q; T_A = median
  over A's runs of the cumulative evaluation time at k*; T_RS = the same for RS at B.
  speedup_time = (T_RS / T_A - 1) * 100 and speedup_evals = (B / k* - 1) * 100. Where A's
  median never reaches q the row says "not reached". Per kernel, the thesis's means cover the
  reached pairs only; the fraction reached and a median over all pairs ("not reached" ranked
  below every reached value) cover every pair.
- evaluation time at equal budget (Table 5): (median T_RS(b) - median T_A(b)) / median T_RS(b),
  the medians over the runs that spent the whole budget b; runs cut short (fewer evaluations
  than b: stopped by the proposal cap or by their strategy) are counted, not compared.
- significance: two-sided Mann-Whitney U of A's final IGD+ against RS's per (space,
  objective set, budget), Holm-corrected over the algorithms of that family; A12 is the
  Vargha-Delaney probability that a run of A ends with a lower IGD+ than a run of RS
  (ties count half; > 0.5 favours A).
- every mean over spaces x objective sets comes with its SD and a 95 % percentile
  bootstrap interval (resamples and seed from the config, recorded in the table).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu

from analysis.io import write_csv, write_text
from analysis.spaces.table import to_markdown

log = logging.getLogger(__name__)

SPACE = ["device", "kernel", "objective_set"]
CELL = SPACE + ["budget"]


@dataclass(frozen=True)
class Bootstrap:
    resamples: int = 10000
    seed: int = 0

    def ci(self, values: np.ndarray) -> tuple[float, float]:
        """95 % percentile interval of the mean of `values` (NaN for fewer than 2 values)."""
        values = np.asarray(values, dtype=float)
        if len(values) < 2:
            return (float("nan"), float("nan"))
        rng = np.random.default_rng(self.seed)
        means = values[rng.integers(0, len(values), size=(self.resamples, len(values)))].mean(axis=1)
        lo, hi = np.percentile(means, [2.5, 97.5])
        return float(lo), float(hi)


def relative_improvement(baseline: np.ndarray, other: np.ndarray) -> np.ndarray:
    """(baseline - other) / baseline; 0 when both are 0; NaN when only the baseline is 0."""
    baseline = np.asarray(baseline, dtype=float)
    other = np.asarray(other, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = (baseline - other) / baseline
    rel = np.where((baseline == 0) & (other == 0), 0.0, rel)
    return np.where((baseline == 0) & (other != 0), np.nan, rel)


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (monotone, capped at 1)."""
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


def bounded_difference(baseline: np.ndarray, other: np.ndarray) -> np.ndarray:
    """(baseline - other) / max(baseline, other) in [-1, 1]: 0 when both are 0, -1 when only the baseline is 0.

    Defined for every pair of non-negative values (positive: `other` is lower, i.e. better)."""
    baseline = np.asarray(baseline, dtype=float)
    other = np.asarray(other, dtype=float)
    if (baseline < 0).any() or (other < 0).any():
        raise ValueError("the bounded difference needs non-negative values")
    top = np.maximum(baseline, other)
    with np.errstate(divide="ignore", invalid="ignore"):
        diff = (baseline - other) / top
    return np.where(top == 0, 0.0, diff)


def _mean_sd_ci(values: np.ndarray, boot: Bootstrap, scale: float) -> tuple[float, float, float, float]:
    """Mean, SD and bootstrap interval of `values` x scale (NaN where too few values)."""
    v = np.asarray(values, dtype=float) * scale
    lo, hi = boot.ci(v)
    return (float(v.mean()) if len(v) else float("nan"), float(v.std(ddof=1)) if len(v) > 1 else float("nan"),
            lo, hi)


DIFFERENCE_COLUMNS = ["n_pairs", "n_better", "n_equal", "n_worse", "n_undefined", "n_in_thesis_mean",
                      "thesis_mean_pct", "thesis_sd_pct", "thesis_ci_low_pct", "thesis_ci_high_pct",
                      "bounded_mean_pct", "bounded_sd_pct", "bounded_ci_low_pct", "bounded_ci_high_pct"]


def paired_summary(baseline: np.ndarray, other: np.ndarray, boot: Bootstrap) -> dict:
    """One row of a relative-difference table from the pairs (m_B, m_A) of a lower-is-better median.

    Counts of pairs where A (`other`) is better / equal / worse than B (`baseline`); the thesis's
    relative difference (m_B - m_A) / m_B in %, whose mean covers the pairs where it is defined
    (`n_in_thesis_mean`); and the bounded difference (m_B - m_A) / max(m_A, m_B) in %, defined for
    every pair. Both means come with SD and bootstrap interval. The keys are DIFFERENCE_COLUMNS.
    """
    b = np.asarray(baseline, dtype=float)
    a = np.asarray(other, dtype=float)
    if b.shape != a.shape or not (np.isfinite(b).all() and np.isfinite(a).all()):
        raise ValueError("paired_summary needs two finite arrays of the same length")
    thesis = relative_improvement(b, a)
    defined = np.isfinite(thesis)
    t = _mean_sd_ci(thesis[defined], boot, 100.0)
    d = _mean_sd_ci(bounded_difference(b, a), boot, 100.0)
    counts = [len(b), int((a < b).sum()), int((a == b).sum()), int((a > b).sum()), int((~defined).sum()),
              int(defined.sum())]
    return dict(zip(DIFFERENCE_COLUMNS, [*counts, *t, *d]))


def censored_median(values: np.ndarray) -> float:
    """Median where NaN ("not reached") ranks below every other value: -inf when at least half are NaN
    (an even count's median averages the two middle values, so one NaN among them gives -inf too)."""
    v = np.asarray(values, dtype=float)
    return float(np.median(np.where(np.isnan(v), -np.inf, v))) if len(v) else float("nan")


def indicator_stats(final: pd.DataFrame) -> pd.DataFrame:
    """Median and IQR of final IGD+ and HV, median evaluation time, per (space, set, setting, budget)."""
    g = final.groupby(CELL + ["setting", "algorithm"], observed=True, sort=True)
    q = lambda s, x: s.quantile(x)  # noqa: E731
    out = g.agg(n_runs=("igd_plus", "size"),
                igd_median=("igd_plus", "median"),
                igd_iqr=("igd_plus", lambda s: q(s, 0.75) - q(s, 0.25)),
                hv_median=("hv", "median"),
                hv_iqr=("hv", lambda s: q(s, 0.75) - q(s, 0.25)),
                eval_time_median_ms=("eval_time_ms", "median"),
                valid_evaluations_median=("valid_evaluations", "median"),
                stopped_early=("stopped_early", "sum"))
    return out.reset_index()


def _medians(final: pd.DataFrame, column: str) -> pd.DataFrame:
    """Median of `column` per cell, one column per setting."""
    return final.groupby(CELL + ["setting"], observed=True)[column].median().unstack("setting")


def improvement(final: pd.DataFrame, baseline: str, others: Sequence[str], boot: Bootstrap) -> pd.DataFrame:
    """Relative difference in median final IGD+ of each setting against `baseline`, per budget
    (`paired_summary` over the (space, objective set) pairs where both have runs)."""
    med = _medians(final, "igd_plus")
    rows = []
    for setting in others:
        if setting not in med or baseline not in med:
            continue
        both = med[[baseline, setting]].dropna()
        for budget, part in both.groupby(level="budget"):
            rows.append({"setting": setting, "baseline": baseline, "budget": int(budget),
                         **paired_summary(part[baseline].to_numpy(), part[setting].to_numpy(), boot)})
    return pd.DataFrame(rows, columns=["setting", "baseline", "budget", *DIFFERENCE_COLUMNS])


def speedup(runs: pd.DataFrame, final: pd.DataFrame, rs: str, others: Sequence[str]) -> pd.DataFrame:
    """Table 4 per space and objective set: k*, T_A, T_RS and the two speedups, or "not reached"."""
    budget = int(final["budget"].max())
    top = runs[runs["budget"] == budget]
    rows = []
    for key, part in top.groupby(SPACE, observed=True, sort=True):
        rs_part = part[part["setting"] == rs]
        if rs_part.empty:
            continue
        rs_final = rs_part[rs_part["k"] == budget]
        q = float(rs_final["igd_plus"].median())
        t_rs = float(rs_final["eval_time_ms"].median())
        for setting in others:
            a = part[part["setting"] == setting]
            if a.empty:
                continue
            curve = a.groupby("k")["igd_plus"].median()
            hit = curve.index[curve.to_numpy() <= q]
            row = dict(zip(SPACE, key), setting=setting, budget=budget, rs_quality=q, rs_time_ms=t_rs)
            if len(hit):
                k_star = int(hit.min())
                t_a = float(a.loc[a["k"] == k_star, "eval_time_ms"].median())
                row.update(status="reached", k_star=k_star, time_ms=t_a,
                           speedup_time_pct=(t_rs / t_a - 1) * 100, speedup_evals_pct=(budget / k_star - 1) * 100)
            else:
                row.update(status="not reached", k_star=np.nan, time_ms=np.nan, speedup_time_pct=np.nan,
                           speedup_evals_pct=np.nan)
            rows.append(row)
    out = pd.DataFrame(rows)
    if len(out):
        out["k_star"] = out["k_star"].astype("Int64")
    return out


def speedup_per_kernel(per_space: pd.DataFrame, boot: Bootstrap) -> pd.DataFrame:
    """Table 4 proper, per kernel and setting: the thesis's mean/SD over the devices x objective sets
    where RS quality was reached (`reached_*`), and over all of them the fraction reached and the
    median speedup with "not reached" ranked below every reached value (`all_pairs_*`)."""
    rows = []
    for (kernel, setting), part in per_space.groupby(["kernel", "setting"], sort=True):
        reached = part[part["status"] == "reached"]
        status = "not reached" if reached.empty else f"reached in {len(reached)} of {len(part)}"
        row = {"kernel": kernel, "setting": setting, "status": status, "n_pairs": len(part),
               "n_reached": len(reached), "fraction_reached": len(reached) / len(part)}
        for what in ("time", "evals"):
            stats = _mean_sd_ci(reached[f"speedup_{what}_pct"].to_numpy(dtype=float), boot, 1.0)
            row.update(zip([f"reached_{what}_{s}_pct" for s in ("mean", "sd", "ci_low", "ci_high")], stats))
        for what in ("time", "evals"):
            row[f"all_pairs_{what}_median_pct"] = censored_median(part[f"speedup_{what}_pct"].to_numpy(dtype=float))
        rows.append(row)
    return pd.DataFrame(rows)


def cut_short(final: pd.DataFrame) -> pd.Series:
    """Runs that ended with fewer evaluations than their budget (proposal cap or the strategy's own end)."""
    return final["evaluations"] < final["budget"]


EVAL_TIME_EXTRA = ["n_pairs_without_full_run", "n_pairs_with_runs_cut_short", "runs_cut_short",
                   "baseline_runs_cut_short", "thesis_mean_all_runs_pct"]


def eval_time(final: pd.DataFrame, rs: str, others: Sequence[str], boot: Bootstrap) -> pd.DataFrame:
    """Table 5: evaluation time saved against RS at equal budget, per budget and setting.

    The medians T(b) are over the runs that spent the whole budget b; a (space, objective set) pair
    where either side has no such run is left out of the comparison and counted. The runs cut short
    are counted per row, and the thesis's mean with them mixed in is given apart for reference.
    """
    short = cut_short(final)
    med_full = _medians(final[~short], "eval_time_ms")
    med_all = _medians(final, "eval_time_ms")
    n_short = final.assign(short=short).groupby(CELL + ["setting"], observed=True)["short"].sum().unstack("setting")
    rows = []
    for setting in others:
        if setting not in med_all or rs not in med_all:
            continue
        pairs = med_all[[rs, setting]].dropna()
        full = med_full.reindex(index=pairs.index, columns=[rs, setting])
        cut = n_short.reindex(index=pairs.index, columns=[rs, setting]).fillna(0).astype(int)
        for budget, part in pairs.groupby(level="budget"):
            compared = full.loc[part.index].dropna()
            thesis_all = relative_improvement(part[rs].to_numpy(), part[setting].to_numpy())
            thesis_all = thesis_all[np.isfinite(thesis_all)]
            c = cut.loc[part.index]
            rows.append({"setting": setting, "baseline": rs, "budget": int(budget),
                         **paired_summary(compared[rs].to_numpy(), compared[setting].to_numpy(), boot),
                         "n_pairs_without_full_run": len(part) - len(compared),
                         "n_pairs_with_runs_cut_short": int(((c[rs] > 0) | (c[setting] > 0)).sum()),
                         "runs_cut_short": int(c[setting].sum()), "baseline_runs_cut_short": int(c[rs].sum()),
                         "thesis_mean_all_runs_pct": float(thesis_all.mean() * 100) if len(thesis_all)
                         else float("nan")})
    return pd.DataFrame(rows, columns=["setting", "baseline", "budget", *DIFFERENCE_COLUMNS, *EVAL_TIME_EXTRA])


def scopes(present: Sequence[str], objective_sets: Mapping[str, Sequence[str]] | None = None
           ) -> list[tuple[str, list[str]]]:
    """The groups of objective sets a mean over spaces x objective sets is taken over.

    "all" pools every set present; "multi-objective" pools the sets of two or more objectives when
    single-objective sets are present too (the thesis's tables pool O3 and O5 only); and each set
    stands alone when there is more than one. Sets keep the order of `objective_sets`.
    """
    order = list(objective_sets or ())
    present = sorted(set(present), key=lambda s: (order.index(s) if s in order else len(order), s))
    out = [("all", present)]
    if objective_sets:
        multi = [s for s in present if len(objective_sets.get(s, ())) > 1]
        if 1 < len(multi) < len(present):
            out.append(("multi-objective", multi))
    if len(present) > 1:
        out += [(s, [s]) for s in present]
    return out


def by_scope(table, final: pd.DataFrame, objective_sets: Mapping[str, Sequence[str]] | None,
             *args) -> pd.DataFrame:
    """`table(rows of final in the scope's sets, *args)` for every scope, stacked with a leading `scope` column."""
    parts = []
    for name, sets in scopes(final["objective_set"].unique(), objective_sets):
        part = table(final[final["objective_set"].isin(sets)], *args)
        part.insert(0, "scope", name)
        parts.append(part)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def significance(final: pd.DataFrame, baseline: str, others: Sequence[str]) -> pd.DataFrame:
    """Mann-Whitney U and A12 of each setting against `baseline` per cell, Holm within each cell."""
    rows = []
    for key, part in final.groupby(CELL, observed=True, sort=True):
        base = part.loc[part["setting"] == baseline, "igd_plus"].to_numpy(dtype=float)
        if len(base) == 0:
            continue
        family = []
        for setting in others:
            a = part.loc[part["setting"] == setting, "igd_plus"].to_numpy(dtype=float)
            if len(a) == 0:
                continue
            if np.all(a == a[0]) and np.all(base == a[0]):
                p = 1.0  # identical constant samples: no evidence of a difference
            else:
                p = float(mannwhitneyu(a, base, alternative="two-sided").pvalue)
            family.append(dict(zip(CELL, key), setting=setting, baseline=baseline, n=len(a), n_baseline=len(base),
                               median=float(np.median(a)), median_baseline=float(np.median(base)), p_value=p,
                               a12=a12_lower_better(a, base)))
        if family:
            for row, adj in zip(family, holm([r["p_value"] for r in family])):
                row["p_holm"] = float(adj)
            rows.extend(family)
    return pd.DataFrame(rows)


def aware_twins(settings: Mapping[str, str]) -> list[tuple[str, str]]:
    """(unaware setting, aware setting) pairs: algorithm X_unaware with the one setting of algorithm X."""
    by_algorithm: dict[str, list[str]] = {}
    for label, algorithm in settings.items():
        by_algorithm.setdefault(algorithm, []).append(label)
    pairs = []
    for label, algorithm in settings.items():
        if algorithm.endswith("_unaware"):
            twins = by_algorithm.get(algorithm[: -len("_unaware")], [])
            if len(twins) == 1:
                pairs.append((label, twins[0]))
    return pairs


SCOPE_DOC = "objective sets pooled: all, multi-objective (sets of two or more objectives), or one set"


def difference_docs(m: str, note: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Column notes of a relative-difference table (DIFFERENCE_COLUMNS, then `extra`'s columns); `m` says what
    the medians m_A, m_B are."""
    return {
        "scope": SCOPE_DOC,
        "setting / baseline": "A, the setting compared, and B, the baseline it is compared against",
        "budget": "evaluations per run of both",
        "m_A / m_B": m,
        "n_pairs": "(space, objective set) pairs of the scope where both m_A and m_B exist; every n_* count and "
                   "the bounded_* columns cover all of them",
        "n_better / n_equal / n_worse": "pairs where m_A < m_B / m_A = m_B / m_A > m_B (exact comparison); "
                                        "they sum to n_pairs",
        "n_undefined": "pairs where m_B = 0 and m_A > 0: the thesis's ratio is undefined and the pair is left out "
                       "of thesis_*; every one of them is also counted in n_worse",
        "n_in_thesis_mean": "n_pairs - n_undefined: the pairs that thesis_* covers",
        "thesis_mean_pct / thesis_sd_pct": "the thesis's aggregate: mean and SD over the n_in_thesis_mean pairs of "
                                           "(m_B - m_A) / m_B in % (0 when both are 0); at most 100, unbounded below; "
                                           "> 0 favours A",
        "bounded_mean_pct / bounded_sd_pct": "mean and SD over all n_pairs pairs of (m_B - m_A) / max(m_A, m_B) "
                                             "in %: within [-100, 100], 0 when both are 0, -100 when only m_B is 0; "
                                             "> 0 favours A",
        "*_ci_low_pct / *_ci_high_pct": "95 % percentile bootstrap interval of the mean beside it",
        **(extra or {}),
        "note": note,
    }


EVAL_TIME_DOCS = {
    "n_pairs_without_full_run": "pairs left out of every other column but the run counts: A or RS has no run "
                                "that spent the whole budget",
    "n_pairs_with_runs_cut_short": "pairs where A or RS has at least one run cut short (fewer evaluations than the "
                                   "budget: proposal cap or the strategy's own end); those runs are left out of "
                                   "the medians",
    "runs_cut_short / baseline_runs_cut_short": "runs of A / of RS cut short, summed over the pairs of the row "
                                                "(n_pairs + n_pairs_without_full_run)",
    "thesis_mean_all_runs_pct": "for reference: the thesis's mean with the runs cut short mixed into the medians "
                                "(not an equal-budget comparison), over the same pairs minus undefined ones",
}
IGD_MEDIANS = "median final IGD+ over the repetitions of A and of B at the budget, per (space, objective set)"


def build(final: pd.DataFrame, runs: pd.DataFrame, settings: Mapping[str, str], boot: Bootstrap,
          objective_sets: Mapping[str, Sequence[str]] | None = None
          ) -> dict[str, tuple[pd.DataFrame, str, dict[str, str]]]:
    """Every table: name -> (frame, title, column docs). `settings`: comparison label -> algorithm;
    `objective_sets`: set name -> objectives (the config's), which defines the scopes of the means."""
    final = final[final["setting"].isin(list(settings))]
    runs = runs[runs["setting"].isin(list(settings))]
    rs = [s for s, a in settings.items() if a == "rs"]
    if len(rs) != 1:
        raise ValueError(f"the comparison needs exactly one random-search setting, found {rs}")
    rs = rs[0]
    others = [s for s in settings if s != rs]
    boot_note = f"bootstrap: {boot.resamples} resamples, seed {boot.seed}"
    tables = {
        "indicators": (indicator_stats(final), "IGD+ and hypervolume at the budget",
                       {"igd_*": "final IGD+ (normalised objectives): median and IQR over repetitions",
                        "hv_*": "hypervolume, reference point 1.1 per normalised objective",
                        "eval_time_median_ms": "median cumulative simulated evaluation time",
                        "stopped_early": "runs that ended before their budget"}),
        "improvement_over_rs": (by_scope(improvement, final, objective_sets, rs, others, boot),
                                "Relative improvement over RS (Table 2)", difference_docs(IGD_MEDIANS, boot_note)),
        "significance": (significance(final, rs, others), "Each setting against RS: Mann-Whitney U, Holm, A12",
                         {"p_value": "two-sided Mann-Whitney U on final IGD+",
                          "p_holm": "Holm-adjusted within (space, objective set, budget)",
                          "a12": "P(setting's IGD+ < RS's) + 0.5 P(tie); > 0.5 favours the setting"}),
        "eval_time": (by_scope(eval_time, final, objective_sets, rs, others, boot),
                      "Evaluation time saved against RS at equal budget (Table 5)",
                      difference_docs(
                          "median cumulative evaluation time at the budget over the runs of A and of B (B = RS) that "
                          "spent the whole budget, per (space, objective set); thesis_* is (T_RS - T_A) / T_RS",
                          boot_note, EVAL_TIME_DOCS)),
    }
    per_space = speedup(runs, final, rs, others)
    tables["speedup_to_rs_spaces"] = (per_space, "Speedup to RS quality per space (Table 4 detail)",
                                      {"rs_quality": "RS's median IGD+ at the largest budget (q)",
                                       "k_star": "fewest evaluations at which the median curve is <= q",
                                       "time_ms": "median cumulative evaluation time at k*",
                                       "speedup_time_pct": "(T_RS / T_A - 1) * 100",
                                       "speedup_evals_pct": "(budget / k* - 1) * 100"})
    tables["speedup_to_rs"] = (speedup_per_kernel(per_space, boot) if len(per_space) else per_space,
                               "Speedup to RS quality per kernel (Table 4)",
                               {"status": "in how many (device, objective set) pairs of the kernel the setting's "
                                          "median curve reached q; 'not reached' when in none",
                                "n_pairs": "(device, objective set) pairs of the kernel (rows of speedup_to_rs_spaces)",
                                "n_reached / fraction_reached": "pairs where q was reached, as a count and as a "
                                                                "fraction of n_pairs",
                                "reached_time_* / reached_evals_*": "the thesis's aggregate: mean, SD and bootstrap "
                                                                    "interval of speedup_time_pct / speedup_evals_pct "
                                                                    "over the n_reached pairs only",
                                "all_pairs_time_median_pct / all_pairs_evals_median_pct":
                                    "median speedup over all n_pairs pairs, 'not reached' ranked below every reached "
                                    "value: -inf when no more than half the pairs reached q",
                                "note": boot_note})
    n2 = [s for s, a in settings.items() if a == "nsga2"]
    n3 = [s for s, a in settings.items() if a == "nsga3"]
    if len(n2) == 1 and len(n3) == 1:
        tables["nsga3_over_nsga2"] = (by_scope(improvement, final, objective_sets, n2[0], n3, boot),
                                      "NSGA-III over NSGA-II (Table 3; the thesis's O5-only column is scope O5)",
                                      difference_docs(IGD_MEDIANS + " (A = NSGA-III, B = NSGA-II)", boot_note))
    twins = aware_twins(settings)
    if twins:
        parts = [by_scope(improvement, final, objective_sets, unaware, [aware], boot) for unaware, aware in twins]
        sig = [significance(final, unaware, [aware]) for unaware, aware in twins]
        tables["aware_over_unaware"] = (pd.concat(parts, ignore_index=True),
                                        "Constraint-aware over constraint-unaware twin",
                                        difference_docs(IGD_MEDIANS + " (A = aware, B = its unaware twin)",
                                                        boot_note))
        tables["aware_over_unaware_tests"] = (pd.concat(sig, ignore_index=True),
                                              "Constraint-aware against unaware twin: Mann-Whitney U, A12",
                                              {"a12": "P(aware's IGD+ < unaware's) + 0.5 P(tie)"})
    return tables


def run(final_parquet: str | Path, runs_parquet: str | Path, settings: Mapping[str, str], boot: Bootstrap,
        out_dir: str | Path, names: Sequence[str], objective_sets: Mapping[str, Sequence[str]] | None = None) -> None:
    """Build the tables and write `<name>.csv` and `<name>.md` for each of `names` (an absent table is an
    error: the config must imply it)."""
    tables = build(pd.read_parquet(final_parquet), pd.read_parquet(runs_parquet), settings, boot, objective_sets)
    missing = [n for n in names if n not in tables]
    if missing:
        raise ValueError(f"tables {missing} cannot be built from these settings ({dict(settings)})")
    for name in names:
        frame, title, docs = tables[name]
        write_csv(frame, Path(out_dir) / f"{name}.csv")
        write_text(to_markdown(frame, title, docs), Path(out_dir) / f"{name}.md")
        log.info("table %s: %d rows", name, len(frame))


def implied_tables(settings: Mapping[str, str]) -> list[str]:
    """The tables a set of comparison settings (label -> algorithm) yields."""
    names = ["indicators", "improvement_over_rs", "significance", "eval_time", "speedup_to_rs_spaces",
             "speedup_to_rs"]
    algorithms = list(settings.values())
    if algorithms.count("nsga2") == 1 and algorithms.count("nsga3") == 1:
        names.append("nsga3_over_nsga2")
    if aware_twins(settings):
        names += ["aware_over_unaware", "aware_over_unaware_tests"]
    return names
