"""The constraint-aware single-objective study, its tables (docs/constraint-aware.md; seed 001 §V).

`tables` (rule ca_tables) gathers every space's scores (`analysis.indicators.constraint_aware.score`) into
tables/constraint_aware_{runs,scores,gains}: per space and algorithm the score with and without constraint
awareness and the gain (`gains`), and per row set of spaces and algorithm the mean gain with its bootstrap
interval (`summary`). The row sets are all spaces, each group (config `spaces[].group`) and the GPU spaces
(`summary_groups`).

A score is that of a set of runs, and moves with the set: each strategy's score on bootstrap resamples of its runs
(rule ca_resample, `analysis.indicators.constraint_aware.resample`) gives its 95 % interval (`score_intervals`),
and the aware and unaware strategies' resamples, drawn independently, paired by number, give the gain's
(`gains`). The scores on each half of the runs show how a score depends on the number of runs.

A space whose methodology budget is fewer than `constraint_aware.min_budget_evaluations` evaluations
(the calculated random search's evaluations to the cutoff, `cutoff_fevals`) is kept out of every
aggregate: there a score measures the resample-until-accepted rule and noise, not search. Its rows
stay in the tables, flagged in column `excluded` with the reason (empty where the space counts).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.errors import InputError
from analysis.io import write_csv, write_parquet, write_text
from analysis.markdown import to_markdown
from analysis.simulate.constraint_aware import PENALISED
from analysis.statistics import Bootstrap
from analysis.tables import literature

# Row sets of the gains table besides the groups (analysis.config.RESERVED_GROUPS keeps spaces off these names):
# every space, and every space tuned on time (the GPU spaces) whatever its group.
ALL_GROUP, GPU_GROUP = "all", "GPU tuned on time"
SEED_001_GAINS_FILE = literature.path("seed001_gains")  # seed 001 §V-B, the gains set beside ours
# The default of constraint_aware.min_budget_evaluations (workflow/schemas/config.schema.yaml): a space whose
# budget is fewer evaluations than this is kept out of the aggregates.
MIN_BUDGET_EVALUATIONS = 20
# A run's stop reason when the strategy ended it itself, its own iteration limit (maxiter) spent before the
# time budget (analysis.kt.budget.STOP_REASONS)
MAXITER_STOP = "strategy"


def stop_count(reasons: Any, reason: str) -> int:
    """How many runs a `stop_reasons` cell ("reason:count;reason:count", rule ca_score) counts for `reason`."""
    if not isinstance(reasons, str):
        return 0
    for part in filter(None, reasons.split(";")):
        name, _, count = part.partition(":")
        if name == reason:
            return int(count)
    return 0


def exclusion(budget_evaluations: float, minimum: int) -> str:
    """Why a space with this budget (evaluations) is kept out of the aggregates; empty when it counts.

    A budget is too small when it is fewer than `minimum` evaluations (a budget of exactly `minimum` counts).
    """
    if budget_evaluations < minimum:
        return f"budget under {minimum} evaluations (constraint_aware.min_budget_evaluations)"
    return ""


def is_excluded(frame: pd.DataFrame) -> pd.Series:
    """Per row, whether its space is kept out of the aggregates (a non-empty `excluded`; empty reads back as NaN)."""
    return frame["excluded"].notna() & (frame["excluded"].astype(str) != "")


# Columns of a ca_resample file (analysis.indicators.methodology.resampled_scores, with the space)
RESAMPLE_COLUMNS = ("space", "strategy", "sample", "resample", "runs", "score")
BOOTSTRAP, HALF = "bootstrap", "half"


def percentile_interval(values: np.ndarray) -> tuple[float, float]:
    """The 95 % percentile interval of resampled values (NaN for fewer than 2)."""
    values = np.asarray(values, dtype=float)
    if len(values) < 2:
        return math.nan, math.nan
    lo, hi = np.percentile(values, [2.5, 97.5])
    return float(lo), float(hi)


def score_intervals(resamples: pd.DataFrame) -> pd.DataFrame:
    """Per space and strategy: the 95 % interval of the score over its bootstrap resamples of runs, their number,
    and the score on the first and on the second half of the runs (`HALF` rows; NaN where there are none)."""
    rows = []
    for (space, strategy), frame in resamples.groupby(["space", "strategy"], sort=False):
        boot = frame[frame["sample"] == BOOTSTRAP]["score"].to_numpy(dtype=float)
        halves = frame[frame["sample"] == HALF].set_index("resample")["score"]
        lo, hi = percentile_interval(boot)
        rows.append({"space": space, "strategy": strategy, "score_ci_low": lo, "score_ci_high": hi,
                     "score_resamples": len(boot), "score_first_half": float(halves.get(0, math.nan)),
                     "score_second_half": float(halves.get(1, math.nan)),
                     "half_runs": int(frame[frame["sample"] == HALF]["runs"].max()) if len(halves) else pd.NA})
    columns = ["space", "strategy", "score_ci_low", "score_ci_high", "score_resamples", "score_first_half",
               "score_second_half", "half_runs"]
    out = pd.DataFrame(rows, columns=columns)
    out["half_runs"] = out["half_runs"].astype("Int64")
    return out


def gain_interval(aware: pd.DataFrame, unaware: pd.DataFrame) -> tuple[float, float]:
    """95 % interval of a space's gain: resample b of the aware runs minus resample b of the unaware runs (drawn
    independently, so pairing them by number pairs independent draws), over the resamples both have."""
    a = aware[aware["sample"] == BOOTSTRAP].set_index("resample")["score"]
    u = unaware[unaware["sample"] == BOOTSTRAP].set_index("resample")["score"]
    common = a.index.intersection(u.index)
    return percentile_interval((a[common] - u[common]).to_numpy(dtype=float))


def gains(scores: pd.DataFrame, min_budget_evaluations: int = MIN_BUDGET_EVALUATIONS,
          resamples: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per space and algorithm: score with and without awareness and the gain (aware - unaware), the share of
    the scored time range backed by runs and of the runs that ended by the strategy's own iteration limit,
    each with and without awareness, the space's budget in evaluations and, where it is fewer than
    `min_budget_evaluations`, why the space is kept out of the aggregates (`exclusion`).

    With `resamples` (the ca_resample rows of every strategy), each score and the gain have a 95 % interval over
    resamples of the runs (`score_intervals`, `gain_interval`); without, those columns are empty.

    Random search (the reference) has only the aware column: it never proposes an invalid
    configuration. Its score checks the calculated baseline (about 0 for a sound random search).
    """
    meta = ["space", "kernel", "device", "objective", "threshold", "feasible_fraction", "density", "algorithm"]
    scores = scores.assign(maxiter_share=[stop_count(r, MAXITER_STOP) / n
                                          for r, n in zip(scores["stop_reasons"], scores["runs"])])
    aware = scores[scores["constraint_aware"]].set_index(["space", "algorithm"])
    unaware = scores[~scores["constraint_aware"]].set_index(["space", "algorithm"])
    if aware.index.duplicated().any() or unaware.index.duplicated().any():
        raise ValueError("more than one strategy per (space, algorithm, awareness)")
    differing = scores.groupby("space")["cutoff_fevals"].nunique() > 1
    if differing.any():
        raise ValueError(f"strategies of one space scored with different budgets: {list(differing[differing].index)}")
    wide = aware[[c for c in meta if c not in ("space", "algorithm")]].copy()
    wide["score_aware"] = aware["score"]
    wide["score_unaware"] = unaware["score"].reindex(wide.index)
    wide["gain"] = wide["score_aware"] - wide["score_unaware"]
    intervals: dict[tuple[str, str], dict[Any, float]] = {
        ("aware", "low"): {}, ("aware", "high"): {}, ("unaware", "low"): {}, ("unaware", "high"): {},
        ("gain", "low"): {}, ("gain", "high"): {}}
    if resamples is not None and len(resamples):
        by = dict(list(resamples.groupby(["space", "strategy"], sort=False)))
        ci = score_intervals(resamples).set_index(["space", "strategy"])
        for key in wide.index:
            names = {"aware": aware.loc[key, "strategy"],
                     "unaware": unaware["strategy"].get(key) if key in unaware.index else None}
            for side, name in names.items():
                if (key[0], name) in ci.index:
                    intervals[(side, "low")][key] = ci.loc[(key[0], name), "score_ci_low"]
                    intervals[(side, "high")][key] = ci.loc[(key[0], name), "score_ci_high"]
            if (key[0], names["aware"]) in by and (key[0], names["unaware"]) in by:
                lo, hi = gain_interval(by[(key[0], names["aware"])], by[(key[0], names["unaware"])])
                intervals[("gain", "low")][key], intervals[("gain", "high")][key] = lo, hi
    for (side, end), values in intervals.items():
        column = f"gain_ci_{end}" if side == "gain" else f"score_{side}_ci_{end}"
        wide[column] = pd.Series(values, dtype=float).reindex(wide.index)
    for column in ("real_fraction", "maxiter_share"):
        wide[f"{column}_aware"] = aware[column]
        wide[f"{column}_unaware"] = unaware[column].reindex(wide.index)
    wide["budget_evaluations"] = aware["cutoff_fevals"].astype(int)
    wide["excluded"] = [exclusion(b, min_budget_evaluations) for b in wide["budget_evaluations"]]
    extra = ["real_fraction_aware", "real_fraction_unaware", "maxiter_share_aware", "maxiter_share_unaware",
             "budget_evaluations", "excluded"]
    scored = ["score_aware", "score_aware_ci_low", "score_aware_ci_high", "score_unaware", "score_unaware_ci_low",
              "score_unaware_ci_high", "gain", "gain_ci_low", "gain_ci_high"]
    wide = wide.reset_index()[meta + scored + extra]
    return wide.sort_values(["algorithm", "density", "space"], ignore_index=True)


def summary_groups(per_space: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The row sets of the gains table: all spaces, each group (sorted), then GPU_GROUP, every space tuned
    on time (no accuracy threshold: the GPU spaces but the mixed-precision kernels') whatever its group,
    where those spaces are neither all spaces nor exactly one group (it would repeat that row set)."""
    groups = [(ALL_GROUP, per_space)] + [(g, f) for g, f in per_space.groupby("group")]
    gpu = per_space[per_space["objective"] != PENALISED]
    if len(gpu) and all(set(gpu["space"]) != set(f["space"]) for _, f in groups):
        groups.append((GPU_GROUP, gpu))
    return groups


def summary(per_space: pd.DataFrame, boot: Bootstrap, seed001_gains: Mapping[str, float]) -> pd.DataFrame:
    """Per algorithm and row set of `summary_groups`: mean scores and gain over the row set's spaces that are
    not excluded (`gains`), SD, bootstrap CI, Spearman correlation of gain with density, how much of the
    runs ended by the strategy's own iteration limit and the gain without the spaces where most did, and
    seed 001's gain (`seed001_gains`, algorithm -> gain: data/literature/seed001_gains.csv). The row sets are
    those of every space, excluded or not, so a group whose spaces are all excluded keeps its rows (with no
    spaces and no gain)."""
    rows = []
    for group, frame in summary_groups(per_space):
        excluded = is_excluded(frame)
        for algorithm in dict.fromkeys(frame["algorithm"]):
            f = frame[~excluded & (frame["algorithm"] == algorithm)]
            g = f["gain"].dropna().to_numpy(dtype=float)
            lo, hi = boot.ci(g) if len(g) else (math.nan, math.nan)
            # spaces where at least half the runs of either variant ended by maxiter: there the late part of
            # the scored time range holds the last value of fewer than half of the runs
            maxiter = (f["maxiter_share_aware"] >= 0.5) | (f["maxiter_share_unaware"] >= 0.5)
            rest = f.loc[~maxiter, "gain"].dropna()
            has = f["gain"].notna() & f["gain_ci_low"].notna()  # spaces with a gain interval
            rows.append({
                "group": group, "algorithm": algorithm, "spaces": len(f),
                "spaces_excluded": int((excluded & (frame["algorithm"] == algorithm)).sum()),
                "score_aware": _mean(f["score_aware"]), "score_unaware": _mean(f["score_unaware"]),
                "gain": float(g.mean()) if len(g) else math.nan,
                "gain_sd": float(g.std(ddof=1)) if len(g) > 1 else math.nan,
                "gain_ci_low": lo, "gain_ci_high": hi, "spaces_gaining": int((g > 0).sum()) if len(g) else pd.NA,
                # spaces whose own gain interval (over resamples of runs) lies above / below 0; none without one
                "spaces_gain_above": int((f.loc[has, "gain_ci_low"] > 0).sum()) if has.any() else pd.NA,
                "spaces_gain_below": int((f.loc[has, "gain_ci_high"] < 0).sum()) if has.any() else pd.NA,
                "seed001_gain": seed001_gains.get(algorithm, math.nan),
                "gain_density_spearman": _spearman(f["density"], f["gain"]),  # NaN for rs: no gains
                "real_fraction_aware": _mean(f["real_fraction_aware"]),
                "real_fraction_unaware": _mean(f["real_fraction_unaware"]),
                "maxiter_share_aware": _mean(f["maxiter_share_aware"]),
                "maxiter_share_unaware": _mean(f["maxiter_share_unaware"]),
                "spaces_maxiter": int(maxiter.sum()) if len(g) else pd.NA,
                "gain_without_maxiter": float(rest.mean()) if len(rest) else math.nan,
            })
    frame = pd.DataFrame(rows)
    for column in ("spaces_gaining", "spaces_gain_above", "spaces_gain_below",
                   "spaces_maxiter"):  # empty for rs: no gain to count
        frame[column] = frame[column].astype("Int64")
    return frame


def _mean(values: pd.Series) -> float:
    """Mean of the values that are not NaN (NaN when none)."""
    values = values.dropna()
    return float(values.mean()) if len(values) else math.nan


def _spearman(x: pd.Series, y: pd.Series) -> float:
    """Spearman rank correlation (NaN when fewer than three spaces or no spread)."""
    from scipy.stats import spearmanr

    if len(x) < 3 or x.nunique() < 2 or y.nunique() < 2:
        return math.nan
    return float(spearmanr(x, y).statistic)


SCORES_DOCS = {
    "space": "device/kernel", "kernel": "kernel", "device": "device",
    "objective": "objective tuned: time, or time_decay (time with seed 002's decay penalty above the threshold)",
    "threshold": "log10 error threshold tau (empty for time)",
    "feasible_fraction": "share of measured configurations with log10 error below tau",
    "density": "constrained / Cartesian size of the space (seed 001 Table III)",
    "algorithm": "Kernel Tuner strategy (rs: random search, the reference, valid configurations only)",
    "score_aware": "performance score with constraint_aware=True, or of rs (0 = calculated RS baseline, 1 = optimum "
                   "at once)",
    "score_aware_ci_low": "95 % percentile interval of score_aware over bootstrap resamples of the runs "
                          "(constraint_aware.score_resamples resamples, each as many runs as there are, scored the "
                          "same way), lower end; empty when not resampled",
    "score_aware_ci_high": "the same, upper end",
    "score_unaware": "performance score with constraint_aware=False (empty for rs)",
    "score_unaware_ci_low": "the same interval of score_unaware, lower end (empty for rs)",
    "score_unaware_ci_high": "the same, upper end",
    "gain": "score_aware - score_unaware",
    "gain_ci_low": "95 % percentile interval of the gain: resample b of the aware runs minus resample b of the "
                   "unaware runs (resampled independently), lower end; empty for rs or when not resampled",
    "gain_ci_high": "the same, upper end",
    "real_fraction_aware": "share of the scored time range backed by the constraint-aware runs (the package's real "
                           "stopping point: beyond it fewer than half of the runs go on, and the curve holds its "
                           "last value)",
    "real_fraction_unaware": "the same for the constraint-unaware runs (empty for rs)",
    "maxiter_share_aware": "share of the constraint-aware runs that ended by the strategy's own iteration limit "
                           "(stop reason strategy; seed 001's maxiter) before the time budget",
    "maxiter_share_unaware": "the same for the constraint-unaware runs (empty for rs)",
    "budget_evaluations": "the methodology's budget in evaluations: those the calculated random search needs to get "
                          "95 % of the way from the median to the optimum (cutoff_fevals)",
    "excluded": "why the space is kept out of every aggregate (budget_evaluations under "
                "constraint_aware.min_budget_evaluations); empty where it counts",
    "group": "the space's group (config spaces[].group; by default time for a space tuned on time, accuracy "
             "threshold for one with a threshold)",
}
GAINS_DOCS = {
    "group": "spaces summarised: all; each group of the scores table; GPU, every space tuned on time (objective "
             "time, not time_decay) whatever its group, listed when those spaces are neither all spaces nor "
             "exactly one group",
    "algorithm": "Kernel Tuner strategy (rs: random search, the reference; no gain)",
    "spaces": "number of spaces counted: those of the row set that are not excluded (every other column is over "
              "them)",
    "spaces_excluded": "spaces of the row set kept out (budget under constraint_aware.min_budget_evaluations; "
                       "column excluded of the scores table)",
    "score_aware": "mean score over spaces, constraint-aware",
    "score_unaware": "mean score over spaces, constraint-unaware", "gain": "mean gain over spaces",
    "gain_sd": "SD of the gain over spaces",
    "gain_ci_low": "95 % percentile-bootstrap interval of the mean gain, lower end",
    "gain_ci_high": "95 % percentile-bootstrap interval of the mean gain, upper end",
    "spaces_gaining": "spaces where awareness raised the score (the point estimate: gain > 0)",
    "spaces_gain_above": "spaces whose own gain interval (gain_ci_low/high of the scores table, over resamples of "
                         "the runs) lies above 0; empty when the spaces were not resampled",
    "spaces_gain_below": "spaces whose own gain interval lies below 0",
    "seed001_gain": "gain reported by seed 001 over its 24 spaces",
    "gain_density_spearman": "Spearman correlation of the gain with the space density over the spaces of the "
                             "row set (on GPU: over all GPU spaces; empty for fewer than three spaces)",
    "real_fraction_aware": "mean over spaces of the share of the scored time range backed by the constraint-aware "
                           "runs (beyond it the curve holds its last value)",
    "real_fraction_unaware": "the same for the constraint-unaware runs",
    "maxiter_share_aware": "mean over spaces of the share of constraint-aware runs that ended by the strategy's own "
                           "iteration limit (seed 001's maxiter) before the time budget",
    "maxiter_share_unaware": "the same for the constraint-unaware runs",
    "spaces_maxiter": "spaces where at least half of the runs with or without awareness ended by the iteration "
                      "limit",
    "gain_without_maxiter": "mean gain over the other spaces (empty when none): the gain that does not rest on runs "
                            "that ended by their iteration limit",
}


def _read_scores(path: str | Path) -> pd.DataFrame:
    """One space's scores (rule ca_score); an error naming the file when it predates the `group` column."""
    frame = pd.read_parquet(path)
    if "group" not in frame.columns:
        raise InputError(path, "has no column 'group' (written before spaces had groups); score the space again",
                         field="group")
    return frame


def read_resamples(paths: Sequence[str | Path], scores: pd.DataFrame) -> pd.DataFrame | None:
    """Every strategy's ca_resample rows (None for no file); an error naming the file for a missing column, and
    naming the space and strategy when a scored strategy has none."""
    if not paths:
        return None
    frames = []
    for path in paths:
        frame = pd.read_parquet(path)
        for column in RESAMPLE_COLUMNS:
            if column not in frame.columns:
                raise InputError(path, "is no ca-resample output (analysis.cli ca-resample)", field=column)
        frames.append(frame[list(RESAMPLE_COLUMNS)])
    resamples = pd.concat(frames, ignore_index=True)
    missing = set(zip(scores["space"], scores["strategy"])) - set(zip(resamples["space"], resamples["strategy"]))
    if missing:
        raise ValueError(f"no resamples (rule ca_resample) for {sorted(missing)}")
    return resamples


# Columns of the runs table after `score` (`score_intervals`)
INTERVAL_COLUMNS = ["score_ci_low", "score_ci_high", "score_resamples", "score_first_half", "score_second_half",
                    "half_runs"]


def runs_table(scores: pd.DataFrame, resamples: pd.DataFrame | None) -> pd.DataFrame:
    """tables/constraint_aware_runs.csv: every strategy's scores row, with its interval and half-run scores after
    `score` (empty when not resampled)."""
    if resamples is None:
        extra = pd.DataFrame(columns=["space", "strategy", *INTERVAL_COLUMNS])
    else:
        extra = score_intervals(resamples)
    out = scores.merge(extra, on=["space", "strategy"], how="left", validate="one_to_one")
    columns = list(scores.columns)
    at = columns.index("score") + 1
    return out[columns[:at] + INTERVAL_COLUMNS + columns[at:]]


def tables(score_files: Sequence[str | Path], curve_files: Sequence[str | Path], out_dir: str | Path,
           curves_out: str | Path, resamples: int, seed: int,
           min_budget_evaluations: int = MIN_BUDGET_EVALUATIONS, resample_files: Sequence[str | Path] = (),
           seed001_gains: str | Path = SEED_001_GAINS_FILE) -> None:
    """tables/constraint_aware_{runs,scores,gains} (.csv; .md for the last two) and all spaces' curves.

    A space whose budget is fewer than `min_budget_evaluations` evaluations is flagged in column `excluded`
    of the runs and scores tables (and of the curves) and counts in no row of the gains table. `resample_files`
    (rule ca_resample, one per space and strategy) give the per-space intervals; without them those columns are
    empty. `resamples` and `seed` are the bootstrap over spaces of the gains table's mean gain; `seed001_gains`
    is the literature file of seed 001's gains (`literature.values_of`), set beside ours.
    """
    out_dir = Path(out_dir)
    scores = pd.concat([_read_scores(f) for f in score_files], ignore_index=True)
    resampled = read_resamples(resample_files, scores)
    per_space = gains(scores, min_budget_evaluations, resampled)
    per_space["group"] = per_space["space"].map(scores.groupby("space")["group"].first())
    excluded = per_space.drop_duplicates("space").set_index("space")["excluded"]
    summary_frame = summary(per_space, Bootstrap(resamples=resamples, seed=seed), literature.values_of(seed001_gains))
    scores = scores.sort_values(["space", "algorithm", "constraint_aware"], ignore_index=True)
    scores["excluded"] = scores["space"].map(excluded)
    # per strategy: score with its interval, stops, budget
    write_csv(runs_table(scores, resampled), out_dir / "constraint_aware_runs.csv")
    write_csv(per_space, out_dir / "constraint_aware_scores.csv")
    write_text(to_markdown(per_space, "Performance score per space, with and without constraint awareness",
                           SCORES_DOCS), out_dir / "constraint_aware_scores.md")
    write_csv(summary_frame, out_dir / "constraint_aware_gains.csv")
    write_text(to_markdown(summary_frame, "Score gained by constraint awareness, mean over spaces", GAINS_DOCS),
               out_dir / "constraint_aware_gains.md")
    curves = pd.concat([pd.read_parquet(f) for f in curve_files], ignore_index=True)
    curves["excluded"] = curves["space"].map(excluded).fillna("")
    write_parquet(curves, curves_out)
