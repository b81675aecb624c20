"""The study's tables (docs/study.md, "Tables"): indicator statistics, Tables 2-5, significance, ablation.

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
  bootstrap interval (resamples and seed from the config, recorded in the table). The interval is
  a cluster bootstrap over spaces: the pairs of one space (its O3 and O5) are not independent, so
  each resample draws spaces, each with all its pairs (`Bootstrap.ci` with clusters). Every such
  table says how many spaces (`n_spaces`) and pairs (`n_pairs`) stand behind a mean.
- scopes: the means of Tables 2, 3, 5 and the ablation are taken per group of objective sets
  (`scopes`), and again over the spaces not used to select the hyperparameters (`<scope> held-out`,
  where the scope has both kinds of space; the selection spaces come from the config).

The statistics on arrays (bootstrap, the two differences, Mann-Whitney U, Holm, A12, the censored
median) are `analysis.statistics`'s; this module arranges them into frames. Which tables the
comparison publishes, and their titles and column notes, are `analysis.tables.registry`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

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

SPACE = ["device", "kernel", "objective_set"]
CELL = SPACE + ["budget"]


DIFFERENCE_COLUMNS = ["n_pairs", "n_spaces", "n_better", "n_equal", "n_worse", "n_undefined", "n_in_thesis_mean",
                      "n_spaces_in_thesis_mean", "thesis_mean_pct", "thesis_sd_pct", "thesis_ci_low_pct",
                      "thesis_ci_high_pct", "bounded_mean_pct", "bounded_sd_pct", "bounded_ci_low_pct",
                      "bounded_ci_high_pct"]


def paired_summary(baseline: np.ndarray, other: np.ndarray, boot: Bootstrap, spaces: Sequence[str] | np.ndarray
                   ) -> dict:
    """One row of a relative-difference table from the pairs (m_B, m_A) of a lower-is-better median, and the
    space of each pair (`spaces`: the pairs of one space are resampled together).

    Counts of pairs where A (`other`) is better / equal / worse than B (`baseline`); the thesis's
    relative difference (m_B - m_A) / m_B in %, whose mean covers the pairs where it is defined
    (`n_in_thesis_mean`, of `n_spaces_in_thesis_mean` spaces); and the bounded difference
    (m_B - m_A) / max(m_A, m_B) in %, defined for every pair. Both means come with SD and a cluster
    bootstrap interval over spaces. The keys are DIFFERENCE_COLUMNS.
    """
    b = np.asarray(baseline, dtype=float)
    a = np.asarray(other, dtype=float)
    spaces = np.asarray(spaces, dtype=object)
    if b.shape != a.shape or not (np.isfinite(b).all() and np.isfinite(a).all()):
        raise ValueError("paired_summary needs two finite arrays of the same length")
    if spaces.shape != b.shape:
        raise ValueError(f"paired_summary needs the space of each pair ({len(spaces)} spaces for {len(b)} pairs)")
    thesis = relative_improvement(b, a)
    defined = np.isfinite(thesis)
    t = mean_sd_ci(thesis[defined], boot, 100.0, spaces[defined])
    d = mean_sd_ci(bounded_difference(b, a), boot, 100.0, spaces)
    counts = [len(b), len(set(spaces)), int((a < b).sum()), int((a == b).sum()), int((a > b).sum()),
              int((~defined).sum()), int(defined.sum()), len(set(spaces[defined]))]
    return dict(zip(DIFFERENCE_COLUMNS, [*counts, *t, *d]))


def space_labels(index: pd.Index) -> np.ndarray:
    """'device/kernel' of each entry of an index with `device` and `kernel` levels (the cluster of a pair)."""
    return (index.get_level_values("device").astype(str) + "/" + index.get_level_values("kernel").astype(str)
            ).to_numpy(dtype=object)


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
                         **paired_summary(part[baseline].to_numpy(), part[setting].to_numpy(), boot,
                                          space_labels(part.index))})
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


SMALL_N = 3  # a Table 4 mean and SD over fewer pairs than this is flagged
SMALL_N_FLAG = f"n < {SMALL_N}"


def speedup_per_kernel(per_space: pd.DataFrame, boot: Bootstrap, selection_spaces: Sequence[str] = ()
                       ) -> pd.DataFrame:
    """Table 4 proper, per kernel and setting: the thesis's mean/SD over the devices x objective sets
    where RS quality was reached (`reached_*`, over `n` pairs of `n_spaces_reached` spaces, flagged in
    `n_flag` where n < SMALL_N; the interval resamples devices, each with its objective sets), and over
    all of them the fraction reached and the median speedup with "not reached" ranked below every
    reached value (`all_pairs_*`). `n_spaces_held_out`: the kernel's spaces that are not among
    `selection_spaces` ('device/kernel', the spaces the hyperparameters were selected on)."""
    rows = []
    for (kernel, setting), part in per_space.groupby(["kernel", "setting"], sort=True):
        reached = part[part["status"] == "reached"]
        status = "not reached" if reached.empty else f"reached in {len(reached)} of {len(part)}"
        spaces = (part["device"].astype(str) + "/" + part["kernel"].astype(str)).to_numpy(dtype=object)
        is_reached = (part["status"] == "reached").to_numpy()
        row = {"kernel": kernel, "setting": setting, "status": status, "n_pairs": len(part),
               "n_spaces": len(set(spaces)), "n_spaces_held_out": len(set(spaces) - set(selection_spaces)),
               "n_reached": len(reached), "fraction_reached": len(reached) / len(part),
               "n": len(reached), "n_spaces_reached": len(set(spaces[is_reached])),
               "n_flag": SMALL_N_FLAG if len(reached) < SMALL_N else ""}
        for what in ("time", "evals"):
            stats = mean_sd_ci(reached[f"speedup_{what}_pct"].to_numpy(dtype=float), boot, 1.0, spaces[is_reached])
            row.update(zip([f"reached_{what}_{s}_pct" for s in ("mean", "sd", "ci_low", "ci_high")], stats))
        for what in ("time", "evals"):
            row[f"all_pairs_{what}_median_pct"] = censored_median(part[f"speedup_{what}_pct"].to_numpy(dtype=float))
        rows.append(row)
    return pd.DataFrame(rows)


def is_cut_short(final: pd.DataFrame) -> pd.Series:
    """Per run (row of `final`): whether it ended with fewer evaluations than its budget (proposal cap or the
    strategy's own end)."""
    return final["evaluations"] < final["budget"]


EVAL_TIME_EXTRA = ["n_pairs_without_full_run", "n_pairs_with_runs_cut_short", "runs_cut_short",
                   "baseline_runs_cut_short", "thesis_mean_all_runs_pct"]


def eval_time(final: pd.DataFrame, rs: str, others: Sequence[str], boot: Bootstrap) -> pd.DataFrame:
    """Table 5: evaluation time saved against RS at equal budget, per budget and setting.

    The medians T(b) are over the runs that spent the whole budget b; a (space, objective set) pair
    where either side has no such run is left out of the comparison and counted. The runs cut short
    are counted per row, and the thesis's mean with them mixed in is given apart for reference.
    """
    short = is_cut_short(final)
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
                         **paired_summary(compared[rs].to_numpy(), compared[setting].to_numpy(), boot,
                                          space_labels(compared.index)),
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


HELD_OUT = "held-out"


def held_out_scope(scope: str) -> str:
    """The name of a scope restricted to the spaces not used to select the hyperparameters."""
    return f"{scope} {HELD_OUT}"


def by_scope(table, final: pd.DataFrame, objective_sets: Mapping[str, Sequence[str]] | None,
             *args, selection_spaces: Sequence[str] = ()) -> pd.DataFrame:
    """`table(rows of final in the scope's sets, *args)` for every scope, stacked with a leading `scope` column.

    After each scope whose rows include both spaces of `selection_spaces` ('device/kernel': those the
    hyperparameters were selected on) and other spaces comes its held-out twin, `held_out_scope(scope)`:
    the same table over the other spaces only."""
    parts = []
    held = ~(final["device"].astype(str) + "/" + final["kernel"].astype(str)).isin(list(selection_spaces))
    for name, sets in scopes(final["objective_set"].unique(), objective_sets):
        in_scope = final["objective_set"].isin(sets)
        part = table(final[in_scope], *args)
        part.insert(0, "scope", name)
        parts.append(part)
        if (in_scope & held).any() and (in_scope & ~held).any():
            part = table(final[in_scope & held], *args)
            part.insert(0, "scope", held_out_scope(name))
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
            family.append(dict(zip(CELL, key), setting=setting, baseline=baseline, n=len(a), n_baseline=len(base),
                               median=float(np.median(a)), median_baseline=float(np.median(base)),
                               p_value=mann_whitney_p(a, base), a12=a12_lower_better(a, base)))
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


@dataclass(frozen=True, eq=False)
class Inputs:
    """What the comparison's tables are built from: the final values (`final`) and the per-evaluation curves
    (`runs`) of the runs of `settings` (comparison label -> algorithm) only; `rs` is the one random-search
    setting, `others` every other setting in `settings` order; `objective_sets` (set name -> objectives, the
    config's) defines the scopes of the means; `selection_spaces` ('device/kernel') are the spaces the
    hyperparameters were selected on, left out of the held-out scopes."""

    final: pd.DataFrame
    runs: pd.DataFrame
    settings: Mapping[str, str]
    boot: Bootstrap
    objective_sets: Mapping[str, Sequence[str]] | None
    rs: str
    others: list[str]
    selection_spaces: tuple[str, ...] = ()

    @classmethod
    def of(cls, final: pd.DataFrame, runs: pd.DataFrame, settings: Mapping[str, str], boot: Bootstrap,
           objective_sets: Mapping[str, Sequence[str]] | None = None, selection_spaces: Sequence[str] = ()
           ) -> Inputs:
        """The rows of `final` and `runs` of `settings`' labels; ValueError unless exactly one setting is `rs`."""
        final = final[final["setting"].isin(list(settings))]
        runs = runs[runs["setting"].isin(list(settings))]
        rs = [s for s, a in settings.items() if a == "rs"]
        if len(rs) != 1:
            raise ValueError(f"the comparison needs exactly one random-search setting, found {rs}")
        return cls(final, runs, settings, boot, objective_sets, rs[0], [s for s in settings if s != rs[0]],
                   tuple(selection_spaces))

    def by_scope(self, table, *args) -> pd.DataFrame:
        """`by_scope` of `table` over this comparison's final values, scopes and selection spaces."""
        return by_scope(table, self.final, self.objective_sets, *args, selection_spaces=self.selection_spaces)

    @cached_property
    def per_space(self) -> pd.DataFrame:
        """`speedup` of every other setting, per space and objective set (computed once for both Table 4s)."""
        return speedup(self.runs, self.final, self.rs, self.others)

    @property
    def boot_note(self) -> str:
        """The note of a table with bootstrap intervals: how they were drawn, and which spaces the held-out
        scopes leave out."""
        note = (f"cluster bootstrap over spaces (each space drawn with all its objective sets): "
                f"{self.boot.resamples} resamples, seed {self.boot.seed}")
        if self.selection_spaces:
            note += (f"; hyperparameters selected on {', '.join(self.selection_spaces)} (config "
                     f"hyperparameters.kernels), which the '{HELD_OUT}' scopes leave out")
        return note


# --- Table 5 split into its parts, and Tables 4 and 5 with the compile part rescaled -----------------

# The parts of a run's evaluation time in the finals (analysis.indicators.jobs.PART_COLUMNS), by part name.
EVAL_TIME_PARTS = {"compile": "eval_compile_ms", "verification": "eval_verification_ms",
                   "benchmark": "eval_benchmark_ms"}
CURVE_COMPILE = "eval_compile_ms"  # the runs' (curves') compile part per k
PART_SUMS = {"verification_benchmark": ("verification", "benchmark")}  # both run the kernel
PART_STATS = [*EVAL_TIME_PARTS, *PART_SUMS]
EVAL_TIME_PARTS_COLUMNS = (["n_pairs", "n_spaces", "saving_mean_pct"]
                           + [f"{p}_{s}_pct" for p in PART_STATS for s in ("mean", "ci_low", "ci_high")]
                           + ["residual_mean_pct", "residual_max_abs_pct"])


def _require_parts(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    """ValueError naming the part columns `frame` lacks (indicators written before the split)."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"the {what} lack {missing}: they come from indicators written before the evaluation "
                         "time was split into its parts; rerun the indicators and summary stages")


def eval_time_parts(final: pd.DataFrame, rs: str, others: Sequence[str], boot: Bootstrap) -> pd.DataFrame:
    """Table 5's saving split into what compile, verification and benchmark time contribute, per budget and setting.

    Per (space, objective set) pair of Table 5's thesis mean (the same full-budget runs, the same pairs), part P
    contributes (median P_RS - median P_A) / median T_RS in points; the mean over the pairs of each part comes
    with its bootstrap interval. A median of sums is not the sum of the medians, so the parts need not add up to
    the saving: the residual (saving - the parts) is given per row, as a mean and as its largest |value| over the
    pairs. `saving_mean_pct` equals Table 5's `thesis_mean_pct`; the intervals resample spaces, each with all its
    pairs, as Table 5's do.
    """
    _require_parts(final, list(EVAL_TIME_PARTS.values()), "finals")
    short = is_cut_short(final)
    med_all = _medians(final, "eval_time_ms")
    med_full = {c: _medians(final[~short], c) for c in ["eval_time_ms", *EVAL_TIME_PARTS.values()]}
    rows = []
    for setting in others:
        if setting not in med_all or rs not in med_all:
            continue
        pairs = med_all[[rs, setting]].dropna()
        for budget, part in pairs.groupby(level="budget"):
            t = med_full["eval_time_ms"].reindex(index=part.index, columns=[rs, setting]).dropna()
            saving = relative_improvement(t[rs].to_numpy(), t[setting].to_numpy())
            defined = np.isfinite(saving)
            t = t[defined]
            t_rs = t[rs].to_numpy()
            spaces = space_labels(t.index)
            row = {"setting": setting, "baseline": rs, "budget": int(budget), "n_pairs": int(defined.sum()),
                   "n_spaces": len(set(spaces)), "saving_mean_pct": mean_sd_ci(saving[defined], boot, 100.0)[0]}
            points = {}
            for name, column in EVAL_TIME_PARTS.items():
                m = med_full[column].reindex(index=t.index, columns=[rs, setting])
                with np.errstate(divide="ignore", invalid="ignore"):
                    points[name] = np.where(t_rs > 0, (m[rs].to_numpy() - m[setting].to_numpy()) / t_rs, 0.0)
            for name, (a, b) in PART_SUMS.items():
                points[name] = points[a] + points[b]
            for name in PART_STATS:
                mean, _, low, high = mean_sd_ci(points[name], boot, 100.0, spaces)
                row.update({f"{name}_mean_pct": mean, f"{name}_ci_low_pct": low, f"{name}_ci_high_pct": high})
            residual = 100.0 * (saving[defined] - sum(points[name] for name in EVAL_TIME_PARTS))
            row["residual_mean_pct"] = float(residual.mean()) if len(residual) else float("nan")
            row["residual_max_abs_pct"] = float(np.abs(residual).max()) if len(residual) else float("nan")
            rows.append(row)
    return pd.DataFrame(rows, columns=["setting", "baseline", "budget", *EVAL_TIME_PARTS_COLUMNS])


def scale_compile(final: pd.DataFrame, runs: pd.DataFrame, factors: Mapping[str, float]
                  ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`final` and `runs` with the compile part of every evaluation time on the spaces of `factors` ("device/kernel"
    -> factor) multiplied by its factor: eval_time_ms + (factor - 1) x the compile part (so a factor of 1 leaves
    every value as it is, bit for bit)."""
    _require_parts(final, [EVAL_TIME_PARTS["compile"]], "finals")
    _require_parts(runs, [CURVE_COMPILE], "curves")
    out = []
    for frame, column in ((final, EVAL_TIME_PARTS["compile"]), (runs, CURVE_COMPILE)):
        frame = frame.copy()
        space = frame["device"].astype(str) + "/" + frame["kernel"].astype(str)
        extra = space.map({s: float(f) - 1.0 for s, f in factors.items()}).fillna(0.0).to_numpy()
        at = extra != 0
        times = frame["eval_time_ms"].to_numpy(dtype=float).copy()
        times[at] = times[at] + extra[at] * frame[column].to_numpy(dtype=float)[at]
        frame["eval_time_ms"] = times
        out.append(frame)
    return out[0], out[1]


SENSITIVITY_COLUMNS = {
    "eval_time": ["thesis_mean_pct", "bounded_mean_pct"],
    "speedup_to_rs": ["reached_time_mean_pct", "all_pairs_time_median_pct"],
    "speedup_to_rs_spaces": ["speedup_time_pct"],
}
SENSITIVITY_KEYS = {
    "eval_time": ["scope", "setting", "budget"],
    "speedup_to_rs": ["kernel", "setting"],
    "speedup_to_rs_spaces": ["device", "kernel", "objective_set", "setting"],
}
SENSITIVITY_FRAME = ["table", "scenario", "spaces_scaled", "scope", "device", "kernel", "objective_set", "setting",
                     "budget", "column", "published", "scaled", "change"]


def _tables_4_and_5(i: Inputs) -> dict[str, pd.DataFrame]:
    """Table 5 by scope and Table 4 per kernel and per space, as `build` makes them."""
    per_space = i.per_space
    return {"eval_time": by_scope(eval_time, i.final, i.objective_sets, i.rs, i.others, i.boot),
            "speedup_to_rs": speedup_per_kernel(per_space, i.boot) if len(per_space) else per_space,
            "speedup_to_rs_spaces": per_space}


def compile_sensitivity(final: pd.DataFrame, runs: pd.DataFrame, settings: Mapping[str, str], boot: Bootstrap,
                        scenarios: Sequence[tuple[str, Mapping[str, float]]],
                        objective_sets: Mapping[str, Sequence[str]] | None = None) -> pd.DataFrame:
    """How Tables 4 and 5 move when the compile part of the evaluation time is rescaled on some spaces.

    Each scenario (name, {"device/kernel": factor}) recomputes Table 5 (every row) and Table 4 per kernel and per
    space (the rows of a kernel or space it rescales) from `scale_compile`'s times; a row per (table row, compared
    column): its published value, its value under the scenario and the change (NaN where either is not finite).
    """
    base = Inputs.of(final, runs, settings, boot, objective_sets)
    published = _tables_4_and_5(base)
    rows = []
    for scenario, factors in scenarios:
        f2, r2 = scale_compile(base.final, base.runs, factors)
        scaled = _tables_4_and_5(Inputs.of(f2, r2, settings, boot, objective_sets))
        label = ", ".join(f"{s} ×{float(f):g}" for s, f in factors.items()) or "none"
        kernels = {s.partition("/")[2] for s in factors}
        for table, keys in SENSITIVITY_KEYS.items():
            a, b = published[table], scaled[table]
            if a.empty:
                continue
            if table == "speedup_to_rs":
                keep = a["kernel"].isin(kernels)
            elif table == "speedup_to_rs_spaces":
                keep = (a["device"].astype(str) + "/" + a["kernel"].astype(str)).isin(list(factors))
            else:
                keep = pd.Series(True, index=a.index)
            a, b = a[keep.to_numpy()].set_index(keys), b.set_index(keys)
            for key, row in a.iterrows():
                ident = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
                for column in SENSITIVITY_COLUMNS[table]:
                    p, s = float(row[column]), float(b.loc[key, column])
                    rows.append({"table": table, "scenario": scenario, "spaces_scaled": label, **ident,
                                 "column": column, "published": p, "scaled": s,
                                 "change": s - p if np.isfinite(p) and np.isfinite(s) else float("nan")})
    out = pd.DataFrame(rows, columns=SENSITIVITY_FRAME)
    if len(out):
        out["budget"] = out["budget"].astype("Int64")
    return out
