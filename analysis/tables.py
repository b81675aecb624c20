"""The study's tables (STUDY §4): indicator statistics, Tables 2-5, significance, ablation.

Definitions (all IGD+ values are of the normalised objectives; lower is better):
- relative improvement of A over B = (median_B - median_A) / median_B. When median_B is 0,
  B reached the true front in most runs: the improvement is 0 when median_A is 0 too,
  and undefined otherwise (excluded from means, counted in `n_undefined`).
- speedup to RS quality (Table 4): q = RS's median IGD+ at the largest budget B; k* = the
  fewest evaluations at which A's median curve (its budget-B runs) is <= q; T_A = median
  over A's runs of the cumulative evaluation time at k*; T_RS = the same for RS at B.
  speedup_time = (T_RS / T_A - 1) * 100 and speedup_evals = (B / k* - 1) * 100. Where A's
  median never reaches q the row says "not reached".
- evaluation time at equal budget (Table 5): (median T_RS(b) - median T_A(b)) / median T_RS(b).
- significance: two-sided Mann-Whitney U of A's final IGD+ against RS's per (space,
  objective set, budget), Holm-corrected over the algorithms of that family; A12 is the
  Vargha-Delaney probability that a run of A ends with a lower IGD+ than a run of RS
  (ties count half; > 0.5 favours A).
- every mean over spaces x objective sets comes with its SD and a 95 % percentile
  bootstrap interval (resamples and seed from the config, recorded in the table).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

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


def _summary(values: pd.Series, boot: Bootstrap, scale: float = 100.0) -> dict:
    """Mean, SD and bootstrap interval of the finite values (x scale), with counts."""
    v = values.to_numpy(dtype=float)
    defined = v[np.isfinite(v)] * scale
    lo, hi = boot.ci(defined)
    return {"n": int(len(v)), "n_undefined": int(len(v) - len(defined)),
            "mean_pct": float(defined.mean()) if len(defined) else float("nan"),
            "sd_pct": float(defined.std(ddof=1)) if len(defined) > 1 else float("nan"),
            "ci_low_pct": lo, "ci_high_pct": hi}


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
    """Mean/SD/CI of the relative improvement of each setting over `baseline`, per budget."""
    med = _medians(final, "igd_plus")
    rows = []
    for setting in others:
        if setting not in med or baseline not in med:
            continue
        rel = pd.Series(relative_improvement(med[baseline].to_numpy(), med[setting].to_numpy()), index=med.index)
        rel = rel[med[baseline].notna().to_numpy() & med[setting].notna().to_numpy()]
        for budget, part in rel.groupby(level="budget"):
            rows.append({"setting": setting, "baseline": baseline, "budget": int(budget), **_summary(part, boot)})
    return pd.DataFrame(rows)


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
    """Table 4 proper: per kernel and setting, mean/SD over devices x objective sets where reached."""
    rows = []
    for (kernel, setting), part in per_space.groupby(["kernel", "setting"], sort=True):
        reached = part[part["status"] == "reached"]
        t = _summary(reached["speedup_time_pct"], boot, scale=1.0)
        e = _summary(reached["speedup_evals_pct"], boot, scale=1.0)
        status = "not reached" if reached.empty else f"reached in {len(reached)} of {len(part)}"
        rows.append({"kernel": kernel, "setting": setting, "status": status, "n": len(part),
                     "n_reached": len(reached),
                     "time_mean_pct": t["mean_pct"], "time_sd_pct": t["sd_pct"],
                     "time_ci_low_pct": t["ci_low_pct"], "time_ci_high_pct": t["ci_high_pct"],
                     "evals_mean_pct": e["mean_pct"], "evals_sd_pct": e["sd_pct"],
                     "evals_ci_low_pct": e["ci_low_pct"], "evals_ci_high_pct": e["ci_high_pct"]})
    return pd.DataFrame(rows)


def eval_time(final: pd.DataFrame, rs: str, others: Sequence[str], boot: Bootstrap) -> pd.DataFrame:
    """Table 5: evaluation time saved against RS at equal budget, per budget and setting."""
    med = _medians(final, "eval_time_ms")
    rows = []
    for setting in others:
        if setting not in med or rs not in med:
            continue
        saved = (med[rs] - med[setting]) / med[rs]
        saved = saved[med[rs].notna() & med[setting].notna()]
        for budget, part in saved.groupby(level="budget"):
            rows.append({"setting": setting, "budget": int(budget), **_summary(part, boot)})
    return pd.DataFrame(rows)


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


DOCS = {
    "scope": "objective sets pooled: all, multi-objective (sets of two or more objectives), or one set",
    "n": "(space, objective set) pairs in the mean",
    "n_undefined": "pairs excluded because the baseline median IGD+ is 0 and the other's is not",
    "mean_pct": "mean relative improvement in % (positive: better than the baseline)",
    "sd_pct": "its standard deviation in %",
    "ci_low_pct / ci_high_pct": "95 % percentile bootstrap interval of the mean",
}


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
                                "Relative improvement over RS (Table 2)", {**DOCS, "note": boot_note}),
        "significance": (significance(final, rs, others), "Each setting against RS: Mann-Whitney U, Holm, A12",
                         {"p_value": "two-sided Mann-Whitney U on final IGD+",
                          "p_holm": "Holm-adjusted within (space, objective set, budget)",
                          "a12": "P(setting's IGD+ < RS's) + 0.5 P(tie); > 0.5 favours the setting"}),
        "eval_time": (by_scope(eval_time, final, objective_sets, rs, others, boot),
                      "Evaluation time saved against RS at equal budget (Table 5)",
                      {**DOCS, "mean_pct": "mean of (T_RS - T_A) / T_RS in %", "note": boot_note}),
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
                               {"status": "'not reached' when no space of the kernel reached q",
                                "time_* / evals_*": "mean, SD and bootstrap interval over reached spaces",
                                "note": boot_note})
    n2 = [s for s, a in settings.items() if a == "nsga2"]
    n3 = [s for s, a in settings.items() if a == "nsga3"]
    if len(n2) == 1 and len(n3) == 1:
        tables["nsga3_over_nsga2"] = (by_scope(improvement, final, objective_sets, n2[0], n3, boot),
                                      "NSGA-III over NSGA-II (Table 3; the thesis's O5-only column is scope O5)",
                                      {**DOCS, "note": boot_note})
    twins = aware_twins(settings)
    if twins:
        parts = [by_scope(improvement, final, objective_sets, unaware, [aware], boot) for unaware, aware in twins]
        sig = [significance(final, unaware, [aware]) for unaware, aware in twins]
        tables["aware_over_unaware"] = (pd.concat(parts, ignore_index=True),
                                        "Constraint-aware over constraint-unaware twin", {**DOCS, "note": boot_note})
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
